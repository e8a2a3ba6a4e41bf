import Foundation

/// Maps a URL scheme to a ``StoragePolicy``, with a default for schemes it does not name.
///
/// ```swift
/// let table = StoragePolicyTable(["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed)
/// table.policy(for: URL(string: "http://example.com/a")!)   // .allowedInMemoryOnly
/// ```
///
/// Schemes compare case-insensitively (RFC 3986 §3.1). A per-entry override (the HTTP layer's
/// hooks use it) is passed to ``TieredCache/store(_:forKey:policy:)`` directly.
public struct StoragePolicyTable: Hashable, Sendable {
    private var policies: [String: StoragePolicy]
    /// The policy for schemes the table does not name.
    public var defaultPolicy: StoragePolicy

    /// Creates a table. Keys are URL schemes without the colon.
    ///
    /// Schemes that differ only in case (`"HTTPS"` and `"https"`) name one scheme: it gets the
    /// narrower of their policies, whatever the dictionary's order (which differs from run to
    /// run), since storing less than asked is always safe and storing more is not.
    public init(_ policies: [String: StoragePolicy] = [:], default defaultPolicy: StoragePolicy = .allowed) {
        self.policies = Dictionary(
            policies.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $0.narrowest($1) })
        self.defaultPolicy = defaultPolicy
    }

    /// `https` → allowed, `http` → allowed in memory only, anything else → not allowed.
    public static let standard = StoragePolicyTable(
        ["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed)

    /// The policy for a scheme.
    public func policy(forScheme scheme: String) -> StoragePolicy {
        policies[scheme.lowercased()] ?? defaultPolicy
    }

    /// The policy for a URL's scheme; a URL without a scheme gets ``defaultPolicy``.
    public func policy(for url: URL) -> StoragePolicy {
        guard let scheme = url.scheme else { return defaultPolicy }
        return policy(forScheme: scheme)
    }

    /// Sets the policy for a scheme.
    public subscript(scheme: String) -> StoragePolicy {
        get { policy(forScheme: scheme) }
        set { policies[scheme.lowercased()] = newValue }
    }
}
