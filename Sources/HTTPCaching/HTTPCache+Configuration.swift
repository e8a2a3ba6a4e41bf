import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import TierCache

extension HTTPCache {
    /// Whether the cache serves one user (a client's cache) or many (a proxy).
    public enum Mode: Hashable, Sendable {
        /// A private cache (RFC 9111 §1): stores `private` responses, ignores `s-maxage`.
        case `private`
        /// A shared cache: honours `s-maxage`, `proxy-revalidate`, `private` and the
        /// `Authorization` rule of §3.5.
        case shared
    }

    /// What a shared cache does with a response that sets a cookie (`Set-Cookie`).
    ///
    /// RFC 9111 does not forbid storing such a response, but a shared cache that stores it sends
    /// one visitor's cookie, often a session, to every later visitor. nginx and Varnish do not
    /// store these responses by default, nor do the common CDNs, and neither does TierCache: a
    /// library's default should be the one that cannot leak a session. A private cache stores
    /// them as the RFC allows (the cookie is its one user's).
    ///
    /// The choice is made before the store hooks run, so a hook that removes `Set-Cookie`
    /// (``StoreHook/stripAuthenticationFields(additionalFields:)``) does not make such a response
    /// storable: choose ``storedWithoutCookie`` for that. A response whose `Cache-Control` names
    /// `Set-Cookie` in `private="…"` or `no-cache="…"` is stored without the cookie whatever the
    /// choice, as RFC 9111 directs.
    public enum SetCookieInSharedCache: Hashable, Sendable {
        /// The response is not stored (``Storability/Reason/setCookie``). The default.
        case responseNotStored
        /// The response is stored without its `Set-Cookie` fields, as `private="Set-Cookie"`
        /// would have it: the visitor who caused the fetch gets the cookie, later ones the
        /// content alone. For an origin that sets cookies on shareable pages (analytics, A/B
        /// buckets) and whose content does not depend on them.
        case storedWithoutCookie
        /// The response is stored with its cookie, as RFC 9111's letter allows: only for an
        /// origin whose cookies are the same for everyone.
        case stored
    }

    /// When a failed fetch may be answered with a stored, stale response.
    public enum OfflineFallback: Hashable, Sendable {
        /// Never: the transport's error propagates.
        case never
        /// Only within a `stale-if-error` window (RFC 5861) of the response or the request, and
        /// not where the origin forbade stale answers (as for ``always``): `stale-if-error`
        /// permits serving stale, and RFC 9111 §4.2.4 puts those prohibitions before any
        /// permission.
        case whereStaleIfErrorAllows
        /// When the response is at most this many seconds past its lifetime (or within
        /// `stale-if-error`), with ``always``'s exceptions.
        case withinMaxStale(TimeInterval)
        /// Any stored response, as RFC 9111 §4.2.4 lets a disconnected cache, except those whose
        /// origin forbade it (`must-revalidate`, `no-cache`, and in a shared cache
        /// `proxy-revalidate` and `s-maxage`), and, in a shared cache, those that stated no
        /// lifetime (`max-age` or `Expires`): a server's per-user page that says nothing about
        /// caching is not served to the next user because the origin is down. The default.
        case always
        /// Any stored response at all, even where the origin forbade serving it stale: the app
        /// prefers stale data, clearly labelled, over an error.
        case evenWhenRevalidationRequired
    }

    /// The engine's settings.
    public struct Configuration: Sendable {
        /// Private (the default) or shared.
        public var mode: Mode
        /// Which tiers may keep a response, by URL scheme; hooks may override per response.
        public var storagePolicies: StoragePolicyTable
        /// Heuristic freshness for responses without explicit lifetime.
        public var heuristics: Freshness.Heuristics
        /// When a failed fetch falls back to a stored response; ``OfflineFallback/always`` by default.
        public var offlineFallback: OfflineFallback
        /// Which transport errors mean "the network failed" (and so allow the offline fallback);
        /// by default every error except cancellation.
        public var isConnectivityError: @Sendable (any Error) -> Bool
        /// Hooks run, in order, before each store.
        public var storeHooks: [StoreHook]
        /// The primary key of a request; `nil` keeps the request out of the cache. By default
        /// ``HTTPCacheKey/defaultKey(for:)`` (which the engine then memoises per request target).
        public var key: @Sendable (HTTPRequest) -> String? {
            didSet { usesDefaultKey = false }
        }
        /// Whether ``key`` is the default, whose keys the engine may reuse for equal targets.
        var usesDefaultKey: Bool
        /// The source of "now".
        public var clock: CacheClock
        /// The most bytes of decoded responses kept beside memory-tier entries, so that their
        /// hits skip decoding (counted by encoded size; a decoded response roughly doubles its
        /// entry's memory, which the tier's capacity does not include). Beyond it, further
        /// entries are decoded on every hit. 32 MiB by default; 0 (or less) turns it off.
        public var decodedResponsesLimit: Int
        /// Where the engine logs a stale response served because the origin failed (`notice`),
        /// stored responses that failed to decode (`warning`) and failed background
        /// revalidations (`debug`). `nil`, the default, logs nothing.
        public var logger: Logger?
        /// Where the engine records its metrics (`MetricLabels`' `http…` names); `nil`, the
        /// default, means the factory the process bootstrapped when the engine is created.
        public var metricsFactory: (any MetricsFactory)?
        /// How tags (surrogate keys) are read from responses for purging by tag: from
        /// `Surrogate-Key` and `Cache-Tag`, which are then removed, by default.
        public var tagging: Tagging
        /// In a shared cache, what becomes of a response that sets a cookie: not stored, by
        /// default (see ``SetCookieInSharedCache``). A private cache ignores it.
        public var setCookieInSharedCache: SetCookieInSharedCache

        /// A configuration; every setting has a default (a private cache).
        public init(
            mode: Mode = .private,
            storagePolicies: StoragePolicyTable = .init(["https": .allowed, "http": .allowed], default: .notAllowed),
            heuristics: Freshness.Heuristics = .init(),
            offlineFallback: OfflineFallback = .always,
            isConnectivityError: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
            storeHooks: [StoreHook] = [],
            key: (@Sendable (HTTPRequest) -> String?)? = nil,
            clock: CacheClock = .system,
            decodedResponsesLimit: Int = 32 << 20,
            logger: Logger? = nil,
            metricsFactory: (any MetricsFactory)? = nil,
            tagging: Tagging = Tagging(),
            setCookieInSharedCache: SetCookieInSharedCache = .responseNotStored
        ) {
            self.mode = mode
            self.storagePolicies = storagePolicies
            self.heuristics = heuristics
            self.offlineFallback = offlineFallback
            self.isConnectivityError = isConnectivityError
            self.storeHooks = storeHooks
            self.key = key ?? HTTPCacheKey.defaultKey(for:)
            self.usesDefaultKey = key == nil
            self.clock = clock
            self.decodedResponsesLimit = decodedResponsesLimit
            self.logger = logger
            self.metricsFactory = metricsFactory
            self.tagging = tagging
            self.setCookieInSharedCache = setCookieInSharedCache
        }
    }
}
