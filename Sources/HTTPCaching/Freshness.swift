import Foundation
import HTTPTypes

/// Freshness lifetime and age (RFC 9111 §4.2).
public enum Freshness {
    /// Settings for heuristic freshness (§4.2.2).
    public struct Heuristics: Hashable, Sendable {
        /// The fraction of the time since `Last-Modified` a response stays fresh; 0.1 (10%), as
        /// the RFC suggests.
        public var fraction: Double
        /// The longest heuristic lifetime; one day by default, so a years-old `Last-Modified`
        /// does not pin a response for months. A NaN or negative fraction or maximum gives no
        /// heuristic lifetime (0).
        public var maximumLifetime: TimeInterval

        /// Heuristics with the RFC's suggested fraction and a one-day cap by default.
        public init(fraction: Double = 0.1, maximumLifetime: TimeInterval = 86_400) {
            self.fraction = fraction
            self.maximumLifetime = maximumLifetime
        }
    }

    /// Status codes heuristically cacheable (RFC 9110 §15.1): a response with one of them may be
    /// stored and given a heuristic lifetime without explicit freshness information.
    public static let heuristicallyCacheableStatuses: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// The freshness lifetime of `response` (§4.2.1), in seconds:
    /// `s-maxage` (shared caches only), else `max-age`, else `Expires` − `Date` (an invalid
    /// `Expires` means already expired, §5.3), else a heuristic (§4.2.2) where the status code or
    /// `public` allows one, else 0.
    ///
    /// - Parameters:
    ///   - response: the stored response.
    ///   - directives: the response's cache directives (`Cache-Control`, or a targeted field).
    ///   - responseTime: the `Date` to assume when the response has none (RFC 9110 §6.6.1).
    ///   - shared: whether the cache is shared (`s-maxage` then applies, §5.2.2.10).
    ///   - heuristics: the heuristic lifetime's rule, for responses without explicit freshness.
    public static func lifetime(
        of response: HTTPResponse, directives: CacheControl, responseTime: Date, shared: Bool, heuristics: Heuristics
    ) -> TimeInterval {
        lifetime(
            ResponseFacts(response, directives: directives), responseTime: responseTime, shared: shared,
            heuristics: heuristics)
    }

    /// The freshness lifetime of a stored response, from its pre-parsed fields (see
    /// ``lifetime(of:directives:responseTime:shared:heuristics:)`` for the rules).
    public static func lifetime(of stored: StoredResponse, shared: Bool, heuristics: Heuristics) -> TimeInterval {
        lifetime(stored.facts, responseTime: stored.responseTime, shared: shared, heuristics: heuristics)
    }

    static func lifetime(
        _ facts: ResponseFacts, responseTime: Date, shared: Bool, heuristics: Heuristics
    ) -> TimeInterval {
        let directives = facts.directives
        if shared, let sharedMaxAge = directives.sharedMaxAge { return TimeInterval(sharedMaxAge) }
        if let maxAge = directives.maxAge { return TimeInterval(maxAge) }
        let date = facts.date ?? responseTime
        if facts.hasExpires {
            guard let expiry = facts.expires else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard directives.isPublic || heuristicallyCacheableStatuses.contains(facts.statusCode),
            let lastModified = facts.lastModified, lastModified < date
        else { return 0 }
        let heuristic = date.timeIntervalSince(lastModified) * heuristics.fraction
        // False for a NaN setting too, which `min` would pass on (or skip) into every later
        // comparison and conversion.
        guard heuristic >= 0, heuristics.maximumLifetime >= 0 else { return 0 }
        return min(heuristics.maximumLifetime, heuristic)
    }

    /// Whether `response` states its lifetime (max-age, s-maxage for shared caches, or Expires).
    public static func hasExplicitLifetime(_ response: HTTPResponse, directives: CacheControl, shared: Bool) -> Bool {
        directives.maxAge != nil || (shared && directives.sharedMaxAge != nil) || response.headerFields[.expires] != nil
    }

    /// Whether a stored response stated a lifetime to serve it stale by: `max-age`, or a valid
    /// `Expires`. Unlike ``hasExplicitLifetime(_:directives:shared:)`` (what makes a response
    /// storable), an invalid `Expires` such as `Expires: 0` counts for nothing: it says "do not
    /// cache". (`s-maxage` forbids stale answers in a shared cache anyway.)
    static func statesLifetime(_ facts: ResponseFacts) -> Bool {
        facts.directives.maxAge != nil || facts.expires != nil
    }

    /// The response's `Date`, if valid.
    public static func dateValue(of response: HTTPResponse) -> Date? {
        response.headerFields[.date].flatMap { HTTPDate.parse($0) }
    }

    /// The response's `Age` in seconds (§5.1): the first member of the field; an invalid value
    /// is ignored (0).
    public static func ageValue(of response: HTTPResponse) -> TimeInterval {
        guard let field = response.headerFields[.age] else { return 0 }
        let first = field.split(separator: ",", maxSplits: 1).first.map { $0.trimmingOWS() } ?? ""
        return TimeInterval(CacheControl.deltaSeconds(String(first)) ?? 0)
    }

    /// The current age of a stored response (§4.2.3):
    ///
    /// ```
    /// apparent_age = max(0, response_time - date_value)
    /// corrected_age_value = age_value + (response_time - request_time)
    /// corrected_initial_age = max(apparent_age, corrected_age_value)
    /// current_age = corrected_initial_age + (now - response_time)
    /// ```
    public static func currentAge(of stored: StoredResponse, now: Date) -> TimeInterval {
        currentAge(stored.facts, requestTime: stored.requestTime, responseTime: stored.responseTime, now: now)
    }

    static func currentAge(_ facts: ResponseFacts, requestTime: Date, responseTime: Date, now: Date) -> TimeInterval {
        let dateValue = facts.date ?? responseTime
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let correctedAgeValue = facts.age + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(responseTime))
        return correctedInitialAge + residentTime
    }
}
