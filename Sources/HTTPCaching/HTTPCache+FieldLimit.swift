extension HTTPCache {
    /// The most header fields a response may have to be stored or returned. `HTTPFields` stops
    /// the process at 65,535 (a precondition of swift-http-types), and serving a response adds
    /// fields to it (`Age`, `Via`, `Cache-Status`): an origin that sent 65,534 (AsyncHTTPClient's
    /// parser takes that many) would crash every process serving it, and, stored, every process
    /// reading it after a restart. Far below that, and far above any real response's (nginx
    /// refuses an upstream head over 4 or 8 KiB).
    public static let maximumResponseFieldCount = 10_000

    /// Throws ``HTTPCacheError/Code/invalidResponse`` for a response of `count` header fields
    /// beyond ``maximumResponseFieldCount``.
    package static func checkFieldCount(_ count: Int) throws(HTTPCacheError) {
        guard count > maximumResponseFieldCount else { return }
        throw HTTPCacheError(
            .invalidResponse, "the response has \(count) header fields, more than \(maximumResponseFieldCount)")
    }
}
