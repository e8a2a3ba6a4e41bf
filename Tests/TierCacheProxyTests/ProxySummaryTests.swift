import HTTPCaching
import Testing
import TierCache
import TierCacheProxy

/// The start-up line `tiercache-proxy` prints, built without starting a server.
@Suite("CachingProxy's start-up summary")
struct ProxySummaryTests {
    func makeProxy(host: String) throws -> CachingProxy {
        let storage = TieredCache(tiers: [try MemoryTier(.init(capacity: 1 << 20))])
        let upstream = try CachingProxy.Upstream("http://127.0.0.1:9")
        return try CachingProxy(
            configuration: .init(upstream: upstream, host: host, port: 8080), storage: storage,
            cacheConfiguration: HTTPCache.Configuration(mode: .shared))
    }

    @Test("Capacities given as configured are printed instead of asking each tier its usage")
    func configuredCapacities() async throws {
        let proxy = try makeProxy(host: "127.0.0.1")
        #expect(await proxy.summary().contains("tiers [memory 1 MiB]"))
        // A Redis tier's usage reads every key on its server: the proxy command passes what it configured.
        #expect(await proxy.summary(tierCapacities: [2 << 20]).contains("tiers [memory 2 MiB]"))
        try await proxy.shutdown()
    }

    @Test("An IPv6 listen address is printed in brackets, as --listen takes it")
    func ipv6Address() async throws {
        let proxy = try makeProxy(host: "::1")
        #expect(await proxy.summary().hasPrefix("tiercache proxy: [::1]:8080 -> "))
        let ipv4 = try makeProxy(host: "127.0.0.1")
        #expect(await ipv4.summary().hasPrefix("tiercache proxy: 127.0.0.1:8080 -> "))
        try await proxy.shutdown()
        try await ipv4.shutdown()
    }
}
