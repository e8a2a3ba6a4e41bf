import Foundation
import HTTPCaching
import NIOCore

extension CachingProxy {
    /// The proxy's settings. The cache's own settings (shared or private mode, storage policies,
    /// heuristics, offline behaviour) are the `HTTPCache`'s.
    public struct Configuration: Sendable {
        /// The origin every request goes to: `http://HOST[:PORT][/PREFIX]` (or `https`). The proxy
        /// forwards nowhere else: a request in absolute form (`GET http://other.example/x`, which
        /// a server must accept, RFC 9112 §3.2.2) is served by its path from this origin, as nginx
        /// serves it, whatever host it names; `CONNECT` and other target forms get 400.
        public var upstream: Upstream
        /// The address to listen on; `127.0.0.1` by default.
        public var host: String
        /// The port to listen on; 0 picks a free one (see ``CachingProxy/run(onListening:)``).
        public var port: Int
        /// The largest request header section (request line and fields) accepted; a larger one is
        /// answered 431. 32 KiB by default.
        public var maximumRequestHeaderBytes: Int
        /// The largest request body forwarded; a larger one is answered 413. 16 MiB by default.
        public var maximumRequestBodyBytes: Int
        /// Responses up to this size are read whole and offered to the cache; larger ones (more
        /// than the tiers would keep) stream from the origin to the client uncached. Also the
        /// bound on the memory one response can take. 8 MiB by default.
        public var maximumCacheableBodyBytes: Int
        /// How long the origin has to answer (head and cached body; a response too large to
        /// cache streams on, each wait for its next bytes no longer than this); past it the
        /// answer is 504, or a stale response where allowed.
        public var upstreamTimeout: TimeAmount
        /// The targeted cache-control field (RFC 9213) this cache obeys: when the origin sends it
        /// as a valid Structured Field Dictionary, its directives replace `Cache-Control` for this
        /// cache, while clients still receive the origin's `Cache-Control` (an invalid one is
        /// ignored, see `TargetedCacheControl` in HTTPCaching). `CDN-Cache-Control` by default,
        /// as a CDN-like cache in front of an origin is expected to; `nil` obeys `Cache-Control`
        /// alone.
        public var targetedCacheControl: String?
        /// The cache's name in `Cache-Status` (RFC 9211) and `Via`.
        public var name: String
        /// How long an idle client connection stays open; also how long a client may leave a
        /// request unfinished, or the answers waiting for it unread, before its connection is
        /// closed.
        public var idleTimeout: TimeAmount
        /// Whether a HEAD is sent to the origin as a GET (the default, as nginx's
        /// `proxy_cache_convert_head`): a HEAD miss then stores the GET response, which answers
        /// later GETs and HEADs. When false, a HEAD goes to the origin as a HEAD, and the engine's
        /// HEAD rules apply (RFC 9111 §4.3.5): the response is kept for later HEADs, and a 200
        /// updates the stored GET response when its validators match, or makes it stale.
        public var convertsHEADToGET: Bool
        /// Whether client requests keep the fields that steer an origin without changing the cache
        /// key (`Forwarded`, `X-Forwarded-Host`, `X-HTTP-Method-Override` and the like). Off by
        /// default: they are removed, so that no client can poison a stored response through them.
        /// Turn it on only behind another proxy that sets those fields itself. Kept, they are
        /// handled as `HTTPCacheMiddleware` handles them: a GET or HEAD with a method override, or
        /// a `Forwarded` naming the host or scheme, goes past the cache, and a response is stored
        /// varying on the fields naming the host, scheme, port or path the request carried, so
        /// that one the proxy in front does not set (an AWS load balancer sets
        /// `X-Forwarded-Proto`, not `X-Forwarded-Host`) answers only requests carrying it.
        public var forwardsClientRoutingFields: Bool
        /// Whether the proxy may run with a cache in private mode, for a proxy that only ever
        /// serves one user (a developer's local proxy). Off by default: a proxy answers many users,
        /// and ``CachingProxy/init(configuration:storage:cacheConfiguration:httpClient:logger:)``
        /// refuses a private cache, which would serve one user's `private` or authorized responses
        /// to the next.
        public var servesSingleUser: Bool
        /// The bearer token that `PURGE` requests must carry (`Authorization: Bearer <token>`);
        /// `nil`, the default, leaves `PURGE` to the origin like any other method. See
        /// ``CachingProxy/purgeMethod`` for the requests the proxy then answers itself.
        public var purgeToken: String?
        /// Whether a request carrying ``CachingProxy/cacheKeyRequest`` (`TierCache-Debug-Key`) gets
        /// its cache key in `Cache-Status` (`key="…"`). Off by default: the key names the upstream
        /// (its host, port and path prefix) and the request's varying fields, which clients on the
        /// internet need not learn; turn it on where only operators reach the proxy.
        public var exposesCacheKeys: Bool
        /// The most client connections open at once; past it, new connections wait in the listen
        /// backlog until one closes (as nginx's `worker_connections`). Each holds a file descriptor,
        /// and a client that trickles a request body can hold one for long: without a bound, enough
        /// of them took every descriptor, the origin's connections included. 4,096 by default (the
        /// process's descriptor limit must allow it and the origin's connections beside).
        public var maximumConnections: Int
        /// The most bytes of buffered answer bodies being sent, all clients together: an answer
        /// from storage holds a copy of the stored body until its client has taken the last byte,
        /// so a thousand slow clients of a large response held a thousand copies. An answer that
        /// would go past it is answered 503 with `Retry-After: 1` (counted in
        /// `tiercache_proxy_answers_refused_for_memory_total`), unless it is the origin's answer to
        /// an unsafe request (a POST it has run), which goes out regardless; one larger than the
        /// whole budget is sent when no other is in flight. 1 GiB by default. Responses too large to cache stream
        /// from the origin at the client's pace and take no share of it.
        public var maximumAnswerBytesInFlight: Int
        /// How long ``CachingProxy/run(onListening:)`` lets the requests in flight finish after
        /// SIGTERM or SIGINT before cancelling them (a client trickling an upload, or a download
        /// read a byte at a time, held the process for good). 30 s by default, within the grace
        /// period of common orchestrators.
        public var shutdownTimeout: TimeAmount

        /// A configuration; only the origin is required (listening on 127.0.0.1:8080 by default).
        public init(
            upstream: Upstream, host: String = "127.0.0.1", port: Int = 8080,
            maximumRequestHeaderBytes: Int = 32 << 10, maximumRequestBodyBytes: Int = 16 << 20,
            maximumCacheableBodyBytes: Int = 8 << 20, upstreamTimeout: TimeAmount = .seconds(30),
            targetedCacheControl: String? = TargetedCacheControl.cdnCacheControl, name: String = "TierCache",
            idleTimeout: TimeAmount = .seconds(60),
            forwardsClientRoutingFields: Bool = false, convertsHEADToGET: Bool = true, servesSingleUser: Bool = false,
            purgeToken: String? = nil, exposesCacheKeys: Bool = false, maximumConnections: Int = 4096,
            maximumAnswerBytesInFlight: Int = 1 << 30, shutdownTimeout: TimeAmount = .seconds(30)
        ) {
            self.upstream = upstream
            self.host = host
            self.port = port
            self.maximumRequestHeaderBytes = maximumRequestHeaderBytes
            self.maximumRequestBodyBytes = maximumRequestBodyBytes
            self.maximumCacheableBodyBytes = maximumCacheableBodyBytes
            self.upstreamTimeout = upstreamTimeout
            self.targetedCacheControl = targetedCacheControl
            self.name = name
            self.idleTimeout = idleTimeout
            self.forwardsClientRoutingFields = forwardsClientRoutingFields
            self.convertsHEADToGET = convertsHEADToGET
            self.servesSingleUser = servesSingleUser
            self.purgeToken = purgeToken
            self.exposesCacheKeys = exposesCacheKeys
            self.maximumConnections = maximumConnections
            self.maximumAnswerBytesInFlight = maximumAnswerBytesInFlight
            self.shutdownTimeout = shutdownTimeout
        }

        /// The largest ``maximumRequestHeaderBytes``: 1 GiB, far past any header section a server
        /// should read.
        public static let largestRequestHeaderBytes = 1 << 30

        /// Throws ``CachingProxyError`` for settings the proxy cannot run with.
        func validate() throws(CachingProxyError) {
            guard (0...65535).contains(port) else {
                throw CachingProxyError("the port must be in 0...65535; got \(port)")
            }
            for (name, value) in [
                ("maximumRequestHeaderBytes", maximumRequestHeaderBytes),
                ("maximumRequestBodyBytes", maximumRequestBodyBytes),
                ("maximumCacheableBodyBytes", maximumCacheableBodyBytes),
                ("maximumConnections", maximumConnections),
                ("maximumAnswerBytesInFlight", maximumAnswerBytesInFlight),
            ] where value <= 0 {
                throw CachingProxyError("\(name) must be positive; got \(value)")
            }
            // The parser's own limit is twice this one: a value near Int.max trapped doubling it.
            guard maximumRequestHeaderBytes <= Self.largestRequestHeaderBytes else {
                throw CachingProxyError(
                    "maximumRequestHeaderBytes must be at most \(Self.largestRequestHeaderBytes) (1 GiB); got \(maximumRequestHeaderBytes)"
                )
            }
            if let purgeToken {
                // A short token could be guessed; one with spaces could not be sent as a bearer token.
                guard purgeToken.utf8.count >= 16, !purgeToken.contains(where: { $0.isWhitespace }) else {
                    throw CachingProxyError("the purge token must be at least 16 bytes, without spaces")
                }
            }
            guard upstreamTimeout > .zero else { throw CachingProxyError("the upstream timeout must be positive") }
            guard shutdownTimeout >= .zero else { throw CachingProxyError("the shutdown timeout must not be negative") }
            if let targetedCacheControl,
                targetedCacheControl.isEmpty || targetedCacheControl.contains(where: { $0 == ":" || $0.isWhitespace })
            {
                throw CachingProxyError("'\(targetedCacheControl)' is not a field name for targeted cache control")
            }
            // Cache-Status writes the name as a structured token (RFC 8941 §3.3.4): a letter first.
            guard let first = name.first, first.isASCII, first.isLetter,
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) })
            else {
                throw CachingProxyError(
                    "the cache name must be a token (a letter, then letters, digits, '-', '.', '_'); got '\(name)'")
            }
        }
    }

    /// The origin server behind the proxy.
    public struct Upstream: Sendable, Hashable, CustomStringConvertible {
        /// `http` or `https`.
        public let scheme: String
        /// The host name or address.
        public let host: String
        /// The port (the scheme's default when the URL gives none).
        public let port: Int
        /// A path prefix put before every request's path (`""` for none).
        public let pathPrefix: String

        /// Parses `http://HOST[:PORT][/PREFIX]`; throws ``CachingProxyError`` for anything else
        /// (another scheme, user info, a query or fragment, no host).
        public init(_ text: String) throws(CachingProxyError) {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            else { throw CachingProxyError("the upstream must be an http:// or https:// URL; got '\(text)'") }
            guard let host = components.host, !host.isEmpty else {
                throw CachingProxyError("the upstream URL '\(text)' has no host")
            }
            guard components.user == nil, components.password == nil, components.query == nil,
                components.fragment == nil
            else {
                throw CachingProxyError("the upstream URL '\(text)' must not have user info, a query or a fragment")
            }
            let port = components.port ?? (scheme == "https" ? 443 : 80)
            guard (1...65535).contains(port) else {
                throw CachingProxyError("the upstream port must be in 1...65535; got \(port)")
            }
            self.scheme = scheme
            self.host = host
            self.port = port
            var prefix = components.percentEncodedPath
            while prefix.hasSuffix("/") { prefix.removeLast() }
            self.pathPrefix = prefix
        }

        /// `HOST:PORT` as a request's authority (the port left out when it is the scheme's default).
        public var authority: String {
            let bracketed = host.contains(":") ? "[\(host)]" : host
            return port == (scheme == "https" ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
        }

        /// The origin as a URL prefix.
        public var description: String { "\(scheme)://\(authority)\(pathPrefix)" }
    }
}

/// A setting the proxy cannot run with, or a request it cannot forward.
public struct CachingProxyError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
