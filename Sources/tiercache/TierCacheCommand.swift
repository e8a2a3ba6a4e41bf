import ArgumentParser

@main
struct TierCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiercache",
        abstract: "Benchmark, simulate and tune TierCache caches, inspect their stores, and run the caching proxy.",
        subcommands: [
            BenchCommand.self, SimulateCommand.self, TuneCommand.self, InspectCommand.self, ProxyCommand.self,
            DemoCommand.self,
        ],
        defaultSubcommand: BenchCommand.self)
}
