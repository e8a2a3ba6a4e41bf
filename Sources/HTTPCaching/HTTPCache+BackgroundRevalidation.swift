extension HTTPCache {
    /// Whether a response served within `stale-while-revalidate` starts a revalidation in the
    /// background through the request's transport. False (for the call's task and its children)
    /// where the transport works only while its request lasts: `HTTPCacheMiddleware` runs the
    /// app's own route, which nothing may call after the request has ended, and a background call
    /// that reached it just before would have run the route inside that request, holding back the
    /// stale answer it was meant to give at once. Without it, the stale response is served through
    /// its window and the first request after the window revalidates.
    @TaskLocal package static var revalidatesInBackground = true
}
