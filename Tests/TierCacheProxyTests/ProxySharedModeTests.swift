import HTTPCaching
import Testing
import TierCache
import TierCacheProxy

/// A proxy answers many users, so the library refuses to build one over a private cache unless
/// it is told, by name, that one user only reaches it.
@Suite("CachingProxy refuses a private cache")
struct ProxySharedModeTests {
    func makeProxy(mode: HTTPCache.Mode, servesSingleUser: Bool) throws(CachingProxyError) -> CachingProxy {
        let storage = TieredCache(tiers: [])
        let upstream = try CachingProxy.Upstream("http://127.0.0.1:9")
        return try CachingProxy(
            configuration: .init(upstream: upstream, port: 0, servesSingleUser: servesSingleUser), storage: storage,
            cacheConfiguration: HTTPCache.Configuration(mode: mode))
    }

    @Test("A private cache configuration (the engine's default) is a typed error at construction")
    func privateRefused() throws {
        let error = #expect(throws: CachingProxyError.self) { try makeProxy(mode: .private, servesSingleUser: false) }
        #expect(error?.message.contains("private mode") == true)
    }

    @Test("servesSingleUser accepts a private cache; shared mode needs no opt-in")
    func optIn() async throws {
        let single = try makeProxy(mode: .private, servesSingleUser: true)
        #expect(single.cache.configuration.mode == .private)
        let shared = try makeProxy(mode: .shared, servesSingleUser: false)
        #expect(shared.cache.configuration.mode == .shared)
        try await single.shutdown()
        try await shared.shutdown()
    }
}
