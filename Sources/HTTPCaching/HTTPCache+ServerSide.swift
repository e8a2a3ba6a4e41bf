extension HTTPCache {
    /// Throws ``HTTPCacheError/Code/privateCacheOnServer`` unless this engine is a shared cache.
    ///
    /// A cache inside a server answers many users, so it is a shared cache (RFC 9111 §1): it must
    /// not store `private` responses, nor responses to requests with `Authorization` unless they
    /// say `public`, `s-maxage` or `must-revalidate` (§3.5). An
    /// engine in private mode (the ``Configuration`` default, right for a client) would store them
    /// and serve one user's response to the next. Server-side entry points call this when they are
    /// built, so the mistake is an error at start-up rather than a leak in production.
    ///
    /// - Parameter entryPoint: the caller's name, for the error message.
    public func requireSharedMode(for entryPoint: String) throws(HTTPCacheError) {
        guard configuration.mode == .shared else {
            throw HTTPCacheError(
                .privateCacheOnServer,
                "\(entryPoint) serves many users, but its HTTPCache is in private mode and would serve one user's "
                    + "private or authorized responses to others; configure the engine with `mode: .shared` "
                    + "(or, for a server that only ever serves one user, use the entry point's single-user initializer)"
            )
        }
    }
}
