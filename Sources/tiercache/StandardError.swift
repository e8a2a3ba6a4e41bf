import Foundation

/// Standard error, for the tool's messages beside its results.
enum StandardError {
    /// Writes `text`, ignoring a standard error that is closed or broken: Foundation's
    /// `FileHandle.write(_:)` traps on one (`2>&1 | head` once `head` has exited).
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var rest = UnsafeRawBufferPointer(bytes)
            while !rest.isEmpty {
                let written = Foundation.write(STDERR_FILENO, rest.baseAddress, rest.count)
                guard written > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            }
        }
    }
}
