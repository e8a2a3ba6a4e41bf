import ArgumentParser
import Dispatch
import Foundation
@_spi(TierCacheInternals) import TierCache

/// Runs a command's work so that an interruption cancels it rather than killing the process:
/// the work's clean-up runs, then the process exits as the signal would have ended it.
///
/// Killed outright, `tiercache bench` left its subjects' store files (up to the disk capacity
/// each, 256 MiB by default) in the temporary directory on every Ctrl-C, and on every
/// `tiercache bench | head` (the closed pipe's `SIGPIPE`). Here `SIGINT`, `SIGTERM`, `SIGHUP` and
/// `SIGPIPE` cancel the work's task instead; the benchmark stops within 64 requests, its files
/// are removed, and the command exits with 128 plus the signal's number, as a shell reports a
/// process the signal killed. A second interruption (not a closed pipe's, which every later write
/// raises) ends the process at once, without clean-up, for work that does not stop (loading a
/// trace).
enum SignalCancellation {
    static func run(_ work: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await work() }
        let received = Locked<Int32?>(nil)
        let interrupt: @Sendable (Int32) -> Void = { number in
            let isFirst = received.withLock { received in
                guard received == nil else { return false }
                received = number
                return true
            }
            if isFirst {
                task.cancel()
            } else if number != SIGPIPE {
                // Not `raise`: this runs on a dispatch thread, which blocks the signal.
                _exit(128 + number)
            }
        }
        var sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            // Ignored by the process, so that only the source hears it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { interrupt(number) }
            return source as any DispatchSourceProtocol
        }
        if let closedPipe = ClosedPipeNotice.install(onNotice: { interrupt(SIGPIPE) }) { sources.append(closedPipe) }
        for source in sources { source.resume() }
        let result = await task.result
        for source in sources { source.cancel() }
        if let number = received.withLock({ $0 }) {
            // A closed pipe is no reason to print; the others say why the run stopped.
            if number != SIGPIPE { StandardError.write("\ninterrupted\n") }
            throw ExitCode(128 + number)
        }
        try result.get()
    }
}

/// `SIGPIPE` as an event. A dispatch signal source does not hear it on Linux: the signal must be
/// ignored for the source to take it over, and an ignored `SIGPIPE` is discarded, not delivered
/// (the write just fails). So a handler writes a byte to a pipe of its own, which a read source
/// watches (the self-pipe pattern: `write` is safe in a signal handler).
private enum ClosedPipeNotice {
    /// The write end of the notice pipe, for the handler, which can capture nothing. Safe
    /// unsynchronized: written once, in `install`, before the handler that reads it is set, and
    /// never again (a second call returns early).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Sets the handler and returns the (suspended) source that calls `onNotice`; nil if the pipe
    /// cannot be made, or was made before (then `SIGPIPE` keeps its default).
    static func install(onNotice: @escaping @Sendable () -> Void) -> (any DispatchSourceProtocol)? {
        var ends: [Int32] = [-1, -1]
        guard writeEnd < 0, pipe(&ends) == 0 else { return nil }
        // Never blocks the handler: a full pipe already holds a notice.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        writeEnd = ends[1]
        signal(SIGPIPE) { _ in
            // The interrupted thread may read `errno` next (the write that raised this failing
            // with EPIPE): kept as it was.
            let saved = errno
            var byte: UInt8 = 0
            _ = write(ClosedPipeNotice.writeEnd, &byte, 1)
            errno = saved
        }
        let readEnd = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .global())
        source.setEventHandler {
            var drained = [UInt8](repeating: 0, count: 64)
            _ = read(readEnd, &drained, drained.count)
            onNotice()
        }
        return source
    }
}
