/// A policy that is another policy with parameters of its own, as a type (so that the simulator
/// and a `MemoryTier` can make it from a ``PolicyContext`` alone): give ``base``, a name and
/// `init(context:)`; every other requirement forwards to ``base``.
///
/// ```swift
/// struct TwoQSmallIn: EvictionPolicyVariant {
///     static let name = "2Q Kin=5%"
///     var base: TwoQPolicy
///     init(context: PolicyContext) { base = TwoQPolicy(context: context, inFraction: 0.05, outFraction: 0.5) }
/// }
/// ```
public protocol EvictionPolicyVariant: EvictionPolicy {
    /// The policy this one configures.
    associatedtype Base: EvictionPolicy
    /// The configured policy.
    var base: Base { get set }
}

extension EvictionPolicyVariant {
    /// The base policy's.
    public static var needsFuture: Bool { Base.needsFuture }
    /// The base policy's.
    public static var usesKeyHash: Bool { Base.usesKeyHash }

    /// The base policy serves the request.
    @inlinable
    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        base.access(slot, size: size, keyHash: keyHash, position: position)
    }
    /// The base policy forgets `slot`.
    public mutating func remove(_ slot: UInt32) { base.remove(slot) }
    /// The base policy forgets every slot.
    public mutating func removeAll() { base.removeAll() }
    /// The base policy's answer.
    @inlinable public func isResident(_ slot: UInt32) -> Bool { base.isResident(slot) }
    /// The base policy's answer.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { base.remembers(slot) }
    /// The base policy's departures.
    @inlinable public var departures: ArraySlice<UInt32> { base.departures }
    /// The base policy's limit.
    public var largestAdmissibleSize: UInt64 { base.largestAdmissibleSize }
    /// The base policy's order.
    public var residentsByRetention: [UInt32] { base.residentsByRetention }
    /// The base policy's hint: a variant of W-TinyLFU loads what its base would, ahead of the
    /// request (the protocol's default, doing nothing, left a variant's replay waiting on memory).
    @inlinable @inline(__always)
    public mutating func prefetch(_ slot: UInt32, keyHash: UInt64) { base.prefetch(slot, keyHash: keyHash) }
}
