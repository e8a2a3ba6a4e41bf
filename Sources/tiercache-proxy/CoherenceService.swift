import ServiceLifecycle
import TierCacheRedis

/// `--coherent`'s subscription to Redis's invalidations, run beside the endpoints and stopped
/// with them (it holds no requests, so a graceful shutdown just ends it).
struct CoherenceService: Service {
    let coherence: RedisCoherence

    func run() async throws {
        await cancelWhenGracefulShutdown { await coherence.run() }
    }
}
