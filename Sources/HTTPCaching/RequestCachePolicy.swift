/// How a request uses the cache, after `URLRequest.CachePolicy`.
public enum RequestCachePolicy: String, Hashable, Sendable, CaseIterable {
    /// The HTTP rules decide (RFC 9111): fresh responses are used, stale ones revalidated.
    case useProtocolCachePolicy
    /// Ignore stored responses; fetch, and store the result.
    case reloadIgnoringLocalCacheData
    /// Ignore stored responses and ask intermediaries to do the same (`Cache-Control: no-cache`,
    /// `Pragma: no-cache`); store the result.
    case reloadIgnoringLocalAndRemoteCacheData
    /// Use a stored response whatever its age; fetch only without one.
    case returnCacheDataElseLoad
    /// Use a stored response whatever its age; never fetch (fails with
    /// ``HTTPCacheError/Code/notCached`` without one).
    case returnCacheDataDontLoad
    /// Revalidate a stored response with the origin before using it (a fresh `immutable` one
    /// is used as it is).
    case reloadRevalidatingCacheData
}
