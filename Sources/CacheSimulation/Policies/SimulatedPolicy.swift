/// A policy the simulator, the miniature simulation and the capacity tuner replay: one of the
/// built-ins or a type of your own, in one list.
///
/// The built-ins have static members named as in ``PolicyKind``, so `[.lru, .s3fifo, .arc]` reads
/// as before; a policy of your own joins them by its type:
///
/// ```swift
/// let policies: [SimulatedPolicy] = [.lru, .arc, SimulatedPolicy(LFUPolicy.self)]
/// let results = try Simulator(trace: trace, unit: .objects)
///     .replay(policies: policies, capacities: [1_000, 10_000])
/// ```
///
/// Two values are equal when they name the same type; reports label a policy by its type's `name`.
public struct SimulatedPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The type that implements the policy.
    public let type: any EvictionPolicy.Type

    /// Any policy type, built-in or yours.
    public init<Policy: EvictionPolicy>(_ type: Policy.Type) {
        self.type = type
    }

    /// A built-in policy.
    public init(_ kind: PolicyKind) {
        self.type = kind.policyType
    }

    /// The name reports and charts use (the type's `name`, e.g. `"S3-FIFO"`).
    public var name: String { type.name }

    /// The report name.
    public var description: String { name }

    /// The built-in this is, if it is one.
    public var kind: PolicyKind? {
        PolicyKind.allCases.first { ObjectIdentifier($0.policyType) == ObjectIdentifier(type) }
    }

    /// Whether both name the same type.
    public static func == (lhs: SimulatedPolicy, rhs: SimulatedPolicy) -> Bool {
        ObjectIdentifier(lhs.type) == ObjectIdentifier(rhs.type)
    }

    /// Hashes the type's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(type))
    }

    /// LRU (``PolicyKind/lru``).
    public static let lru = SimulatedPolicy(.lru)
    /// FIFO (``PolicyKind/fifo``).
    public static let fifo = SimulatedPolicy(.fifo)
    /// CLOCK (``PolicyKind/clock``).
    public static let clock = SimulatedPolicy(.clock)
    /// SIEVE (``PolicyKind/sieve``).
    public static let sieve = SimulatedPolicy(.sieve)
    /// S3-FIFO (``PolicyKind/s3fifo``).
    public static let s3fifo = SimulatedPolicy(.s3fifo)
    /// ARC (``PolicyKind/arc``).
    public static let arc = SimulatedPolicy(.arc)
    /// W-TinyLFU (``PolicyKind/wtinylfu``).
    public static let wtinylfu = SimulatedPolicy(.wtinylfu)
    /// Belady's MIN (``PolicyKind/belady``).
    public static let belady = SimulatedPolicy(.belady)
    /// LIRS (``PolicyKind/lirs``).
    public static let lirs = SimulatedPolicy(.lirs)
    /// 2Q (``PolicyKind/twoQ``).
    public static let twoQ = SimulatedPolicy(.twoQ)
}
