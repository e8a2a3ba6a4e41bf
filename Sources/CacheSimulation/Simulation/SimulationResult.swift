/// The outcome of replaying one trace through one policy at one capacity.
public struct SimulationResult: Sendable, Codable, Hashable {
    /// The policy's name (the policy type's `name`).
    public var policy: String
    /// The capacity replayed, in ``unit``.
    public var capacity: UInt64
    /// Whether the capacity counts objects or bytes.
    public var unit: CapacityUnit
    /// The requests replayed.
    public var requests: Int
    /// The requests served from the cache.
    public var hits: Int
    /// The bytes of all requests; in object mode, the request count (see ``byteHitRatio``).
    public var requestedBytes: UInt64
    /// The bytes of the requests served from the cache; in object mode, the hits.
    public var hitBytes: UInt64
    /// Wall-clock time of the replay alone (not the trace loading).
    public var seconds: Double

    /// Hits over requests, 0...1.
    public var hitRatio: Double { requests == 0 ? 0 : Double(hits) / Double(requests) }
    /// Misses over requests, 0...1.
    public var missRatio: Double { 1 - hitRatio }
    /// Bytes served from the cache over bytes requested, 0...1. In object mode every request
    /// counts as one byte, so this is ``hitRatio``: the replay does not read object sizes there
    /// (a memory access per request on a trace of millions of objects), and the simulation
    /// report prints `-` for it. Replay in byte mode for the byte hit ratio.
    public var byteHitRatio: Double { requestedBytes == 0 ? 0 : Double(hitBytes) / Double(requestedBytes) }
    /// Replayed requests per second.
    public var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
}
