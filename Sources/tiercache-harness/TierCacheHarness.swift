import ArgumentParser

/// The processes the project's reliability tests and scripts start: writers killed mid-commit,
/// readers of damaged stores, a disk-full probe, many writers at once. Not a product: users never
/// install it, and `tiercache` carries only their commands.
@main
struct TierCacheHarness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiercache-harness",
        abstract: "Test-harness processes for TierCache's crash, damage, disk-full, many-writers and coherence tests.",
        subcommands: [
            CrashWriterCommand.self, CrashCheckCommand.self, DamageReaderCommand.self, StressCommand.self,
            DiskFullProbeCommand.self, HoldReaderCommand.self, CoherenceSoakCommand.self,
        ])
}
