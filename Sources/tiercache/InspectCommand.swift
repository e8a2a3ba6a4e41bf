import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB
import TierCacheSQLite

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarise an LMDB tier's store without changing it.")

    @Argument(help: "The tier's directory.")
    var directory: String

    @Option(help: "How many entries to list as largest and oldest (5 by default).")
    var top: Int?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(
        help: ArgumentHelp(
            "Walk every page and record and report damage.",
            discussion: "The walk runs in a child process, so damage it misses cannot crash this one. "
                + "Exits 1 when the store is damaged, 2 when the walk crashed, "
                + "3 when there is no store to check, it cannot be read, or the walk was killed (SIGKILL: "
                + "out of memory) or answered nothing readable."))
    var verify = false

    /// Set in the child that `--verify` starts: walk here and print JSON.
    @Flag(help: .hidden)
    var verifyInThisProcess = false

    func validate() throws {
        // A negative count listed nothing, without a word.
        if let top, top < 0 { throw ValidationError("--top must be zero or positive (got \(top))") }
        if verify, top != nil {
            throw ValidationError("--top lists entries of the summary; --verify walks the store instead")
        }
    }

    func run() throws {
        if verifyInThisProcess { return try verifyHere() }
        if verify { return try verifyInChild() }
        let report: LMDBInspection
        do {
            report = try LMDBTier.inspect(directory: URL(fileURLWithPath: directory), top: top ?? 5)
        } catch {
            throw failure(error)
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
        print(
            "in use       \(ByteCount.format(report.bytesInUse)) in \(report.entries) entries (data.mdb \(ByteCount.format(report.dataFileBytes)))"
        )
        print("compression  \(String(format: "%.2f", report.compressionRatio))x")
        if report.damagedRecords > 0 { print("damaged      \(report.damagedRecords) records (deleted on next lookup)") }
        if report.unknownFormatRecords > 0 {
            print("newer format \(report.unknownFormatRecords) records (written by a newer TierCache)")
        }
        printDictionaries(report)
        if !report.sealedRecordsByKey.isEmpty {
            let keys = report.sealedRecordsByKey.sorted { $0.key < $1.key }.map { "key \($0.key): \($0.value)" }.joined(
                separator: ", ")
            print(
                "sealed       \(report.sealedRecordsByKey.values.reduce(0, +)) records (\(keys)); \(report.unopenedRecords) not opened (no key given)"
            )
        }
        let dateFormatter = ISO8601DateFormatter()
        for (title, list) in [("largest", report.largest), ("oldest", report.oldest)] where !list.isEmpty {
            print("\n\(title):")
            for entry in list {
                print(
                    "  \(ByteCount.format(entry.storedBytes).padding(toLength: 10, withPad: " ", startingAt: 0)) "
                        + "(\(ByteCount.format(entry.originalBytes)) raw)  \(dateFormatter.string(from: entry.storedAt))  \(terminalSafe(entry.key))"
                )
            }
        }
    }
}

extension InspectCommand {
    /// The dictionaries, their age, and what they gain: on their samples when trained, and on
    /// the records stored with them now.
    private func printDictionaries(_ report: LMDBInspection) {
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.2fx", $0) } ?? "n/a" }
        for dictionary in report.dictionaries {
            let age = Self.age(Date().timeIntervalSince(dictionary.createdAt))
            let origin = dictionary.isProvided ? "provided by the app" : "trained on \(dictionary.samples) samples"
            let records = report.recordsByDictionary[String(dictionary.id)] ?? 0
            print(
                "dictionary   #\(dictionary.id) \(ByteCount.format(dictionary.bytes)), \(origin), \(age) old"
                    + "\(dictionary.isSealed ? ", sealed" : ""): \(records) records; on its samples \(ratio(dictionary.ratioOnSamples)) "
                    + "with it, \(ratio(dictionary.ratioOnSamplesWithout)) without")
        }
        if let with = report.dictionaryRecordsRatio {
            print(
                "with dict.   records compressed with a dictionary: \(ratio(with)) with it, "
                    + "\(ratio(report.dictionaryRecordsRatioWithout)) alone (up to 256 sampled)")
        }
    }

    /// `error`, saying so when the directory holds a SQLite tier, which this command does not read.
    private func failure(_ error: TierCacheError) -> CommandFailure {
        let sqliteFile = URL(fileURLWithPath: directory).appendingPathComponent(SQLiteTier.fileName).path
        guard error.code == .foreignStore, FileManager.default.fileExists(atPath: sqliteFile) else {
            return CommandFailure("\(error)")
        }
        return CommandFailure("\(error): it holds a SQLite tier (\(SQLiteTier.fileName)), and inspect reads LMDB tiers")
    }

    /// "42 s", "17 min", "5 h", "3 d".
    static func age(_ seconds: TimeInterval) -> String {
        // From a creation time read off disk: any finite value, however far off.
        guard seconds.isFinite else { return "unknown" }
        let seconds = max(0, seconds)
        if seconds >= 1e14 { return "over 1,000,000 years" }
        if seconds < 120 { return "\(Int(seconds)) s" }
        if seconds < 7200 { return "\(Int(seconds / 60)) min" }
        if seconds < 172_800 { return "\(Int(seconds / 3600)) h" }
        return "\(Int(seconds / 86400)) d"
    }

    /// The status of a `--verify` that could not check the store (none there, another kind of
    /// store, unreadable): not 1, which says the store is damaged (a script that resets damaged
    /// stores must not reset a path it mistyped, nor a SQLite store).
    static let uncheckedStatus: Int32 = 3

    /// The child's side: walk, print the report as JSON.
    private func verifyHere() throws {
        let report: LMDBVerification
        do {
            report = try LMDBTier.verify(directory: URL(fileURLWithPath: directory))
        } catch {
            StandardError.write("Error: \(failure(error))\n")
            throw ExitCode(Self.uncheckedStatus)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    /// Runs this executable again with `--verify-in-this-process` and reports what it found, or
    /// that it crashed.
    private func verifyInChild() throws {
        let process = Process()
        process.executableURL = Self.currentExecutable()
        // `--` first: a directory named like an option (`-odd`) is still the directory.
        process.arguments = ["inspect", "--verify-in-this-process", "--", directory]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL {
            // Not the store's doing: the out-of-memory killer, or someone's kill -9.
            StandardError.write(
                "Error: the verifier was killed (SIGKILL) before it finished reading \(directory): the store was not "
                    + "checked (out of memory?)\n")
            throw ExitCode(Self.uncheckedStatus)
        }
        if process.terminationReason == .uncaughtSignal {
            let message =
                "the verifier crashed (signal \(process.terminationStatus)) reading \(directory): the store is damaged"
            if json {
                print("{\n  \"crashed\" : true,\n  \"signal\" : \(process.terminationStatus)\n}")
            } else {
                print(message)
            }
            throw ExitCode(2)
        }
        // The child reports damage in its JSON and exits 0; 3 when it could not check, having said
        // why. Any other status is a failure of the verifier's own (an argument error's 64), not
        // damage: 1 would have a script reset the store.
        guard process.terminationStatus == 0 else {
            if process.terminationStatus != Self.uncheckedStatus {
                StandardError.write(
                    "Error: the verifier exited with status \(process.terminationStatus): the store was not checked\n")
            }
            throw ExitCode(Self.uncheckedStatus)
        }
        guard let report = try? JSONDecoder().decode(LMDBVerification.self, from: data) else {
            // Not damage: 1 would have a script reset a store nobody found damaged.
            StandardError.write("Error: the verifier's report could not be read: the store was not checked\n")
            throw ExitCode(Self.uncheckedStatus)
        }
        if json {
            print(String(decoding: data, as: UTF8.self), terminator: "")
        } else {
            print("store        \(directory)")
            print(
                "walked       \(report.pagesWalked) pages of \(ByteCount.format(report.pageSize)) "
                    + "(\(ByteCount.format(report.bytesRead)) read), \(report.freePages) free pages, \(report.entries) entries"
            )
            print("structure    \(report.structuralDamage.map { "DAMAGED: \($0)" } ?? "sound")")
            print("records      \(report.damagedRecords == 0 ? "sound" : "\(report.damagedRecords) damaged")")
            for key in report.damagedRecordKeys { print("  damaged    \(terminalSafe(key))") }
            if report.unknownFormatRecords > 0 {
                print("newer format \(report.unknownFormatRecords) records (written by a newer TierCache; not damage)")
            }
        }
        if !report.isSound { throw ExitCode(1) }
    }

    /// This executable's path (`/proc/self/exe` where it exists, so a relative `argv[0]` is fine).
    static func currentExecutable() -> URL {
        if FileManager.default.fileExists(atPath: "/proc/self/exe") {
            if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                return URL(fileURLWithPath: resolved)
            }
        }
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }
}
