/// The outcome of replaying one trace through one policy at one capacity.
public struct SimulationResult: Sendable, Codable, Hashable {
    public var policy: String
    public var capacity: UInt64
    public var unit: CapacityUnit
    public var requests: Int
    public var hits: Int
    public var requestedBytes: UInt64
    public var hitBytes: UInt64
    /// Wall-clock time of the replay alone (not the trace loading).
    public var seconds: Double

    /// Hits over requests, 0...1.
    public var hitRatio: Double { requests == 0 ? 0 : Double(hits) / Double(requests) }
    public var missRatio: Double { 1 - hitRatio }
    /// Bytes served from the cache over bytes requested, 0...1.
    public var byteHitRatio: Double { requestedBytes == 0 ? 0 : Double(hitBytes) / Double(requestedBytes) }
    /// Replayed requests per second.
    public var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
}
