import Foundation
@_spi(TierCacheInternals) import TierCache

/// A one-line progress bar with an ETA on standard error, shown only on a terminal and never in CI,
/// so pipes and logs stay clean.
final class ProgressBar: Sendable {
    private let label: String
    private let enabled: Bool
    private let start = ContinuousClock.now
    private let lastDrawn = Locked<ContinuousClock.Instant?>(nil)

    init(label: String) {
        self.label = label
        let environment = ProcessInfo.processInfo.environment
        enabled = isatty(STDERR_FILENO) != 0 && environment["CI"] == nil && environment["TERM"] != "dumb"
    }

    /// Redraws at most ten times a second.
    func update(_ fraction: Double, detail: String = "") {
        guard enabled else { return }
        let now = ContinuousClock.now
        let shouldDraw = lastDrawn.withLock { last in
            if let last, now - last < .milliseconds(100), fraction < 1 { return false }
            last = now
            return true
        }
        guard shouldDraw else { return }
        let clamped = min(max(fraction, 0), 1)
        let width = 30
        let filled = Int(Double(width) * clamped)
        let elapsed = (now - start).inSeconds
        let eta = clamped > 0.01 ? " ETA \(Self.clock(elapsed / clamped - elapsed))" : ""
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(label) [\(bar)] \(Int(clamped * 100))%\(eta) \(detail)".utf8))
    }

    /// Clears the line.
    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }

    private static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}

enum URLPath {
    static func url(_ path: String) -> URL { URL(fileURLWithPath: path) }
}
