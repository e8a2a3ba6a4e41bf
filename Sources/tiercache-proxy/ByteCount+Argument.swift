import ArgumentParser
import TierCache

extension ByteCount: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
