import ArgumentParser

@main
struct TierCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiercache",
        abstract: "Benchmark, simulate and tune TierCache caches, and inspect their stores.",
        subcommands: [BenchCommand.self, SimulateCommand.self, TuneCommand.self, InspectCommand.self, DemoCommand.self, CrashWriterCommand.self],
        defaultSubcommand: BenchCommand.self)
}
