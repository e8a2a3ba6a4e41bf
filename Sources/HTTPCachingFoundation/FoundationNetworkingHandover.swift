#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import HTTPCaching

/// What ``TieredURLCache`` may hand FoundationNetworking's `URLSession` on Linux.
///
/// FoundationNetworking checks a cached response once more before it serves it (its HTTP
/// protocol's `canCache`), and a response that fails the check is not only skipped: the session
/// calls `removeCachedResponse(for:)`, which deletes it from every tier. Its check refuses
/// responses this cache stores and serves correctly, among them every response with `Vary`
/// (including the `Vary: Accept-Encoding` of any compressing server) and every response with
/// `Expires` but no `max-age` (its date formatter reads no HTTP date on Linux, and an unreadable
/// `Expires` counts as expired). So the cache hands over only what the check accepts:
/// - `Vary` and, without `max-age` or `s-maxage`, `Expires` are left out of the response handed
///   over: the cache has applied both already (it matched the variant, and judged freshness);
/// - a response the check would refuse for any other reason is not handed over (`nil`: the
///   session goes to the origin and the stored response stays): a request with `Authorization`
///   or `Proxy-Authorization`; a response with `WWW-Authenticate` or `Proxy-Authenticate`,
///   `no-cache` or `no-store`, a status outside 200, 203, 204, 206, 300, 301, 404, 405, 410, 414
///   and 501, or a `max-age` that has run out (from the response's `Date`, or 0).
enum FoundationNetworkingHandover {
    /// The statuses FoundationNetworking serves from a cache.
    static let servedStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501]

    /// `cached`, as FoundationNetworking will serve it for `request` at `now`, or nil when it
    /// would refuse it (and delete it).
    static func handover(_ cached: CachedURLResponse, for request: URLRequest, now: Date) -> CachedURLResponse? {
        guard let response = cached.response as? HTTPURLResponse, let url = response.url,
            servedStatuses.contains(response.statusCode),
            request.value(forHTTPHeaderField: "Authorization") == nil,
            request.value(forHTTPHeaderField: "Proxy-Authorization") == nil,
            response.value(forHTTPHeaderField: "WWW-Authenticate") == nil,
            response.value(forHTTPHeaderField: "Proxy-Authenticate") == nil
        else { return nil }
        let cacheControl = CacheControl(
            fieldValues: response.value(forHTTPHeaderField: "Cache-Control").map { [$0] } ?? [])
        if cacheControl.noCache || cacheControl.noStore { return nil }
        if let maxAge = cacheControl.maxAge {
            // Counted from the earlier of the response's Date and now, as FoundationNetworking
            // counts (it reads Date only where its formatter can; either way this is no later).
            let date = response.value(forHTTPHeaderField: "Date").flatMap { HTTPDate.parse($0, now: now) }
            let start = min(date ?? now, now)
            if start.addingTimeInterval(TimeInterval(maxAge)) <= now { return nil }
        }
        var omitted: Set<String> = ["vary"]
        if cacheControl.maxAge == nil, cacheControl.sharedMaxAge == nil { omitted.insert("expires") }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String, !omitted.contains(name.lowercased())
            else { continue }
            fields[name] = value
        }
        guard
            let handed = HTTPURLResponse(
                url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
        else { return nil }
        return CachedURLResponse(
            response: handed, data: cached.data, userInfo: cached.userInfo, storagePolicy: cached.storagePolicy)
    }
}
#endif
