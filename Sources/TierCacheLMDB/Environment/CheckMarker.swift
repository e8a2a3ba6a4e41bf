import Foundation
import TierCache

/// The "being checked" mark and the locks that make it safe for several processes sharing one
/// store directory.
///
/// Two sidecar files sit beside `data.mdb`:
/// - `tiercache.check` holds the mark ("checking pid N", or nothing) and its `flock` is held
///   exclusively by whichever process is opening the store, so opens run one at a time. A process
///   that finds the mark while holding that lock knows the process that wrote it no longer holds
///   it: it died (the kernel drops `flock`s with the process) while checking.
/// - `tiercache.users` is `flock`ed shared by every open tier for its lifetime. An opener that can
///   take it exclusively (without waiting) is the store's only user, so nobody is writing the
///   file it is about to check, and it may delete the store if it must.
///
/// `flock` locks belong to an open file description, so two tiers in one process exclude each
/// other like two processes do, and are released when the process dies, however it dies.
final class CheckMarker: Sendable {
    static let markFileName = "tiercache.check"
    static let usersFileName = "tiercache.users"

    /// What the opener found.
    enum Situation {
        /// No other tier has the store open; `staleMark` tells whether a previous opener died
        /// while checking it.
        case alone(staleMark: String?)
        /// Other tiers have the store open (they checked it when they opened it).
        case shared(staleMark: String?)
    }

    private let markFD: Int32
    private let usersFD: Int32
    let situation: Situation

    /// Takes the open lock (waiting for another process's open to finish) and learns whether
    /// this opener is alone. The open lock is held until ``finishOpening()``.
    init(directory: URL) throws(TierCacheError) {
        let markPath = directory.appendingPathComponent(Self.markFileName).path
        let usersPath = directory.appendingPathComponent(Self.usersFileName).path
        let created = access(markPath, F_OK) != 0
        let markFD = open(markPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard markFD >= 0 else { throw LMDBStatus.error(errno, "opening \(Self.markFileName)", path: directory.path) }
        let usersFD = open(usersPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard usersFD >= 0 else {
            let code = errno
            close(markFD)
            throw LMDBStatus.error(code, "opening \(Self.usersFileName)", path: directory.path)
        }
        if created { Self.syncDirectory(directory.path) }
        while flock(markFD, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let code = errno
                close(markFD)
                close(usersFD)
                throw LMDBStatus.error(code, "locking \(Self.markFileName)", path: directory.path)
            }
        }
        self.markFD = markFD
        self.usersFD = usersFD
        let mark = Self.readMark(markFD)
        if flock(usersFD, LOCK_EX | LOCK_NB) == 0 {
            situation = .alone(staleMark: mark)
        } else {
            situation = .shared(staleMark: mark)
        }
    }

    deinit {
        // Closing drops both locks.
        close(markFD)
        close(usersFD)
    }

    /// Writes the mark and flushes it to disk before the check reads the store. A mark that cannot
    /// be written (a full disk) only loses the crash-loop guard for this open: the check itself
    /// still runs, so it is not an error.
    func mark() {
        let text = Array("checking pid \(getpid())\n".utf8)
        _ = ftruncate(markFD, 0)
        _ = text.withUnsafeBytes { pwrite(markFD, $0.baseAddress, $0.count, 0) }
        _ = fsync(markFD)
    }

    /// Clears the mark: the check finished without the process dying.
    func clear() {
        _ = ftruncate(markFD, 0)
        _ = fsync(markFD)
    }

    /// Keeps a shared hold on the users lock for the tier's lifetime and lets the next opener in.
    func finishOpening() {
        // Converting exclusive to shared is not atomic everywhere, but no other opener can
        // try for it in between: they wait for the open lock, released just after.
        _ = flock(usersFD, LOCK_SH)
        _ = flock(markFD, LOCK_UN)
    }

    private static func readMark(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Clears a mark left in `directory` (used when the store is deleted by hand).
    static func clearMark(in directory: URL) {
        let fd = open(directory.appendingPathComponent(markFileName).path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = ftruncate(fd, 0)
        _ = fsync(fd)
        close(fd)
    }

    private static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
