import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarise an LMDB tier's store without changing it.")

    @Argument(help: "The tier's directory.")
    var directory: String

    @Option(help: "How many entries to list as largest and oldest.")
    var top = 5

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let report: LMDBInspection
        do {
            report = try LMDBTier.inspect(directory: URL(fileURLWithPath: directory), top: max(0, top))
        } catch {
            throw ValidationError("\(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        print("store        \(report.directory)")
        print("capacity     \(ByteCount.format(report.capacity))")
        print("in use       \(ByteCount.format(report.bytesInUse)) in \(report.entries) entries (data.mdb \(ByteCount.format(report.dataFileBytes)))")
        print("compression  \(String(format: "%.2f", report.compressionRatio))x")
        if report.damagedRecords > 0 { print("damaged      \(report.damagedRecords) records (deleted on next lookup)") }
        let dateFormatter = ISO8601DateFormatter()
        for (title, list) in [("largest", report.largest), ("oldest", report.oldest)] where !list.isEmpty {
            print("\n\(title):")
            for entry in list {
                print("  \(ByteCount.format(entry.storedBytes).padding(toLength: 10, withPad: " ", startingAt: 0)) "
                    + "(\(ByteCount.format(entry.originalBytes)) raw)  \(dateFormatter.string(from: entry.storedAt))  \(entry.key.prefix(100))")
            }
        }
    }
}
