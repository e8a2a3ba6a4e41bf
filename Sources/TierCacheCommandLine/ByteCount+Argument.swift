import ArgumentParser
import TierCache

// The one place both executables (`tiercache`, `tiercache-proxy`) get `ByteCount` as a
// command-line argument ("64MiB", "1.5GB"): written once per executable before, which a test
// target linking both saw as a duplicate conformance.
extension ByteCount: ExpressibleByArgument {
    /// Parses `argument` as ``ByteCount/init(_:)`` does; `nil` (an argument error) otherwise.
    public init?(argument: String) { self.init(argument) }
}
