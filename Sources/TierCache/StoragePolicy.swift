/// Where an entry may be stored, after `URLCache.StoragePolicy`.
public enum StoragePolicy: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Every tier may store the entry.
    case allowed
    /// Only tiers whose ``TierMedium`` is ``TierMedium/memory`` may store the entry; it never
    /// reaches disk or a shared server.
    case allowedInMemoryOnly
    /// No tier stores the entry.
    case notAllowed

    /// The one of `self` and `other` that permits fewer tiers.
    func narrowest(_ other: StoragePolicy) -> StoragePolicy {
        let order: [StoragePolicy] = [.notAllowed, .allowedInMemoryOnly, .allowed]
        return order.first { $0 == self || $0 == other } ?? self
    }

    /// Whether a tier on `medium` may store an entry under this policy.
    @inline(__always)
    public func permits(_ medium: TierMedium) -> Bool {
        switch self {
        case .allowed: true
        case .allowedInMemoryOnly: medium == .memory
        case .notAllowed: false
        }
    }

    /// The policy's name, as `URLCache.StoragePolicy` spells its cases.
    public var description: String { rawValue }
}

/// Where a tier keeps its entries; storage policies are decided by it.
public enum TierMedium: String, Hashable, Sendable, CustomStringConvertible {
    /// The process's own memory: gone when the process ends.
    case memory
    /// Files on this machine.
    case disk
    /// A server shared over the network (Redis, ...).
    case remote

    /// The medium's name.
    public var description: String { rawValue }
}
