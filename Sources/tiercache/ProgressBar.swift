import Foundation
@_spi(TierCacheInternals) import TierCache

/// A one-line progress bar with an ETA on standard error, shown only on a terminal and never in CI,
/// so pipes and logs stay clean.
final class ProgressBar: Sendable {
    private let label: String
    private let enabled: Bool
    private let state = Locked(State())

    /// When the bar last drew, and the stage it shows and when that stage started (its ETA
    /// counts from there: a run's stages each go from 0 to 1).
    private struct State {
        var lastDrawn: ContinuousClock.Instant?
        var stage: String?
        var stageStart = ContinuousClock.now
    }

    init(label: String) {
        self.label = label
        let environment = ProcessInfo.processInfo.environment
        enabled = isatty(STDERR_FILENO) != 0 && environment["CI"] == nil && environment["TERM"] != "dumb"
    }

    /// Redraws at most ten times a second. A run of several stages, each from 0 to 1, names them
    /// in `stage`; a new one restarts the ETA's clock.
    func update(_ fraction: Double, detail: String = "", stage: String? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let stageStart: ContinuousClock.Instant? = state.withLock { state in
            if state.stage != stage {
                state.stage = stage
                state.stageStart = now
            } else if let last = state.lastDrawn, now - last < .milliseconds(100), fraction < 1 {
                return nil
            }
            state.lastDrawn = now
            return state.stageStart
        }
        guard let stageStart else { return }
        let clamped = min(max(fraction, 0), 1)
        let width = 30
        let filled = Int(Double(width) * clamped)
        let elapsed = (now - stageStart).inSeconds
        let eta = clamped > 0.01 ? " ETA \(Self.clock(elapsed / clamped - elapsed))" : ""
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let shown = [stage, detail.isEmpty ? nil : detail].compactMap { $0 }.joined(separator: " ")
        StandardError.write("\r\u{1B}[2K\(label) [\(bar)] \(Int(clamped * 100))%\(eta) \(shown)")
    }

    /// Clears the line.
    func finish() {
        guard enabled else { return }
        StandardError.write("\r\u{1B}[2K")
    }

    private static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}

enum URLPath {
    static func url(_ path: String) -> URL { URL(fileURLWithPath: path) }
}
