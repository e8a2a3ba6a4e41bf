import ArgumentParser

/// A byte count on the command line: `1048576`, `512KiB`, `64MiB`, `2GiB` (also KB/MB/GB as powers of 1024).
struct ByteCount: ExpressibleByArgument, CustomStringConvertible {
    let bytes: Int

    init?(argument: String) {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)]
        var number = Substring(argument)
        var multiplier = 1
        for (suffix, factor) in units where argument.hasSuffix(suffix) {
            number = argument.dropLast(suffix.count)
            multiplier = factor
            break
        }
        guard let value = Int(number.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        bytes = product
    }

    var description: String { Self.format(bytes) }

    static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

import Foundation
