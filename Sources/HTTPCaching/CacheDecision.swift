import Foundation
import HTTPTypes

/// What to do with a request, given what the cache holds: the RFC 9111 decision, with no I/O.
public enum CacheDecision: Hashable, Sendable {
    /// Answer with the stored response as it is (`stale` says whether it is past its lifetime,
    /// which a client's `max-stale` or a cache policy allowed).
    case useStored(stale: Bool)
    /// Answer with the stored (stale) response now and revalidate it in the background
    /// (`stale-while-revalidate`, RFC 5861 §3).
    case useStoredAndRevalidate
    /// Send a conditional request (or a full one if the stored response has no validator).
    case revalidate
    /// Ignore any stored response and fetch.
    case fetch
    /// Answer from the cache or not at all: nothing usable is stored (`only-if-cached` →
    /// 504, RFC 9111 §5.2.1.7; `returnCacheDataDontLoad` → an error).
    case unsatisfiable

    /// The settings a decision depends on.
    public struct Context: Sendable {
        /// Whether the cache is shared (a proxy or CDN) rather than private to one user.
        public var shared: Bool
        /// How responses without explicit freshness are given a lifetime.
        public var heuristics: Freshness.Heuristics
        /// The time of the decision.
        public var now: Date

        /// A context for a decision at `now`.
        public init(shared: Bool, heuristics: Freshness.Heuristics = .init(), now: Date) {
            self.shared = shared
            self.heuristics = heuristics
            self.now = now
        }
    }

    /// Decides for `request` with `requestDirectives`, a stored response that matched its
    /// secondary key (or `nil`), and the request's cache policy.
    ///
    /// With ``RequestCachePolicy/useProtocolCachePolicy``:
    /// - request `no-cache` (or `Pragma: no-cache` without `Cache-Control`, §5.4) and response
    ///   `no-cache` (§5.2.2.4) require revalidation;
    /// - a response is used when fresh (§4.2) and within the request's `max-age` and
    ///   `min-fresh` (§5.2.1.1, §5.2.1.3);
    /// - a stale response is used within the request's `max-stale` (§5.2.1.2) unless
    ///   `must-revalidate` (or `proxy-revalidate` in a shared cache) forbids it (§5.2.2.2, §5.2.2.8),
    ///   and in a shared cache only if it stated its lifetime (`max-age`, `Expires`): a response
    ///   the origin said nothing about (a server route's per-user page without `Cache-Control`)
    ///   is not served stale to another client on that client's say-so. §4.2.4 makes `max-stale`
    ///   a permission, not a duty (nginx and Varnish ignore it altogether);
    /// - within `stale-while-revalidate` it is used while a background revalidation runs;
    /// - otherwise it is revalidated; `only-if-cached` turns "fetch" into ``unsatisfiable``.
    public static func decide(
        request: HTTPRequest, requestDirectives: CacheControl, stored: StoredResponse?,
        policy: RequestCachePolicy, context: Context
    ) -> CacheDecision {
        decide(
            request: request, requestDirectives: requestDirectives, located: stored.map(Located.unstored),
            policy: policy, context: context)
    }

    /// The decision for a located response: the engine's path, which reads the stored response's
    /// pre-parsed facts in place instead of copying the response.
    /// `measure`, when given, is `Measure(located, context)` computed by the caller (which then
    /// reuses it for the served response's age).
    static func decide(
        request: HTTPRequest, requestDirectives: CacheControl, located: Located?,
        policy: RequestCachePolicy, context: Context, measure precomputed: Measure? = nil
    ) -> CacheDecision {
        // A shared cache never answers from a response only a private cache stores (§5.2.2.7):
        // one found in a tier shared with a private engine (a client engine writing the same disk
        // or Redis tier, or an engine whose mode changed) was served to every client. It is as
        // good as absent.
        let located = context.shared && located?.response.isForPrivateCachesOnly == true ? nil : located
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .fetch
        case .returnCacheDataElseLoad:
            guard let located else { return .fetch }
            return .useStored(stale: Measure(located, context).isStale)
        case .returnCacheDataDontLoad:
            guard let located else { return .unsatisfiable }
            return .useStored(stale: Measure(located, context).isStale)
        case .reloadRevalidatingCacheData:
            guard let located else { return .fetch }
            if located.response.facts.directives.immutable, !Measure(located, context).isStale {
                return .useStored(stale: false)
            }
            return .revalidate
        case .useProtocolCachePolicy:
            break
        }
        guard let located else { return requestDirectives.onlyIfCached ? .unsatisfiable : .fetch }
        if located.revalidatesFirst { return requestDirectives.onlyIfCached ? .unsatisfiable : .revalidate }
        let measure = precomputed ?? Measure(located, context)
        let directives = measure.facts.directives
        let clientWantsRevalidation =
            requestDirectives.noCache
            || (request.headerFields[.cacheControl] == nil && hasPragmaNoCache(request.headerFields))
        if clientWantsRevalidation || directives.noCache {
            return requestDirectives.onlyIfCached ? .unsatisfiable : .revalidate
        }
        if let maxAge = requestDirectives.maxAge, measure.age > TimeInterval(maxAge) {
            return requestDirectives.onlyIfCached ? .unsatisfiable : .revalidate
        }
        let remaining = measure.lifetime - measure.age
        if remaining > 0 {
            if let minFresh = requestDirectives.minFresh, remaining < TimeInterval(minFresh) {
                return requestDirectives.onlyIfCached ? .unsatisfiable : .revalidate
            }
            return .useStored(stale: false)
        }
        let staleness = -remaining
        if !forbidsStale(directives, shared: context.shared) {
            if let maxStale = requestDirectives.maxStale, staleness <= TimeInterval(maxStale),
                mayServeStaleUnbidden(measure.facts, context)
            {
                return .useStored(stale: true)
            }
            if let window = directives.staleWhileRevalidate, staleness <= TimeInterval(window),
                !requestDirectives.onlyIfCached
            {
                return .useStoredAndRevalidate
            }
        }
        return requestDirectives.onlyIfCached ? .unsatisfiable : .revalidate
    }

    /// A stored response's lifetime and its age at `now`.
    struct Measure {
        let facts: ResponseFacts
        let lifetime: TimeInterval
        let age: TimeInterval
        let now: Date

        init(_ located: Located, _ context: Context) {
            facts = located.response.facts
            let responseTime = located.response.responseTime
            let lifetime = Freshness.lifetime(
                facts, responseTime: responseTime, shared: context.shared, heuristics: context.heuristics)
            let requestTime = located.response.requestTime
            age = Freshness.currentAge(facts, requestTime: requestTime, responseTime: responseTime, now: context.now)
            // A soft purge ends the freshness lifetime at the response's age when it was purged.
            if let invalidatedAt = located.response.invalidatedAt {
                let ageWhenPurged = Freshness.currentAge(
                    facts, requestTime: requestTime, responseTime: responseTime, now: invalidatedAt)
                self.lifetime = min(lifetime, max(0, ageWhenPurged))
            } else {
                self.lifetime = lifetime
            }
            now = context.now
        }

        var isStale: Bool { age >= lifetime }

        /// ``age`` in whole seconds, as `Age` states it: at most `CacheControl.maximumDeltaSeconds`
        /// (RFC 9111 §1.2.2), so an entry whose stored times are extreme (an infinite age) reads
        /// as old, not as a conversion that traps.
        var ageSeconds: Int { Int(min(age, Double(CacheControl.maximumDeltaSeconds)).rounded(.down)) }
    }

    /// `Pragma: no-cache`, which a cache honours only without `Cache-Control` (§5.4).
    static func hasPragmaNoCache(_ fields: HTTPFields) -> Bool {
        fields.contains {
            $0.name.canonicalName == "pragma" && DirectiveParser.fieldNames($0.value).contains("no-cache")
        }
    }

    /// Whether `stored` is past its freshness lifetime at `context.now`.
    public static func isStale(_ stored: StoredResponse?, _ context: Context) -> Bool {
        guard let stored else { return false }
        return Measure(Located.unstored(stored), context).isStale
    }

    /// Whether a stale response may be served without the origin's word: on a client's
    /// `max-stale` or `stale-if-error`, or by the cache's own offline fallback. In a shared cache
    /// only one that stated its lifetime (``Freshness/statesLifetime(_:)``): not a server's
    /// per-user page that said nothing about caching, to the next user.
    static func mayServeStaleUnbidden(_ facts: ResponseFacts, _ context: Context) -> Bool {
        !context.shared || Freshness.statesLifetime(facts)
    }

    /// Whether a stored response's `directives` forbid serving it stale (RFC 9111 §4.2.4):
    /// `must-revalidate`, and in a shared cache `proxy-revalidate` and `s-maxage`, which carries
    /// `proxy-revalidate`'s meaning there (§5.2.2.8, §5.2.2.10). No permission to serve stale
    /// overrides them: not `max-stale`, not `stale-while-revalidate`, not `stale-if-error`,
    /// whether the client or the origin gives it (an origin that wants stale answers from a shared
    /// cache sends `max-age` for it, not `s-maxage`); only an ``OfflineFallback`` the application
    /// chose to override them does.
    static func forbidsStale(_ directives: CacheControl, shared: Bool) -> Bool {
        directives.mustRevalidate || (shared && (directives.proxyRevalidate || directives.sharedMaxAge != nil))
    }

    /// The statuses an origin's answer may have for `stale-if-error` to stand in for it: RFC 5861
    /// §4's "any situation that would result in a 500, 502, 503, or 504" (not 501 Not
    /// Implemented, 505, 507 or 511, which a stale response would not mend).
    static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    /// Whether `stored` may be served stale after a failed fetch or revalidation, within
    /// `stale-if-error` (RFC 5861 §4), from the response or the request, unless its directives
    /// forbid stale answers (`no-cache`, `must-revalidate`, and in a shared cache
    /// `proxy-revalidate` and `s-maxage`: RFC 9111 §4.2.4 puts them before any permission).
    public static func staleIfErrorAllows(
        _ stored: StoredResponse, requestDirectives: CacheControl, context: Context
    ) -> Bool {
        staleIfErrorAllows(Located.unstored(stored), requestDirectives: requestDirectives, context: context)
    }

    static func staleIfErrorAllows(_ located: Located, requestDirectives: CacheControl, context: Context) -> Bool {
        let measure = Measure(located, context)
        let directives = measure.facts.directives
        guard !forbidsStale(directives, shared: context.shared), !directives.noCache else { return false }
        // A client's own stale-if-error, as its max-stale; the response's own is the origin's word.
        let requestWindow = mayServeStaleUnbidden(measure.facts, context) ? requestDirectives.staleIfError : nil
        guard let window = requestWindow ?? directives.staleIfError else { return false }
        return measure.age - measure.lifetime <= TimeInterval(window)
    }
}
