import ArgumentParser

@main
struct TierCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiercache",
        abstract: "Inspect and exercise TierCache stores.",
        subcommands: [DemoCommand.self, InspectCommand.self, CrashWriterCommand.self],
        defaultSubcommand: DemoCommand.self)
}
