#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a trace file that matters to reading it: a binary copy describes its
/// source while the file (its inode), its size, its modification time and its status change time
/// are unchanged, and only a regular file can be read twice (a pipe or device yields
/// its bytes once, and has no size or time that says what it will yield).
///
/// The modification time alone does not say a file is unchanged: `cp -p`, `rsync -t`, `tar x`
/// and `curl -R` replace a file's contents and set its old time back, and a trace of fixed-size
/// records keeps its size when its requests change. No tool can set the status change time, and
/// a replacement renamed into place is another inode. (Not the device: network and removable
/// file systems get another number at each mount, which would make every copy stale.)
struct FileStatus: Equatable {
    var size: UInt64
    /// Nanoseconds since the epoch.
    var modified: UInt64
    /// When the file's contents or attributes last changed (`st_ctime`), in nanoseconds since the
    /// epoch.
    var statusChanged: UInt64
    var inode: UInt64
    var isRegularFile: Bool
    var isDirectory: Bool

    /// The status of the file at `path` (symbolic links followed), or nil when it cannot be read.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
        modified = Self.nanoseconds(status.st_mtimespec)
        statusChanged = Self.nanoseconds(status.st_ctimespec)
        #else
        modified = Self.nanoseconds(status.st_mtim)
        statusChanged = Self.nanoseconds(status.st_ctim)
        #endif
        inode = UInt64(truncatingIfNeeded: status.st_ino)
        size = UInt64(status.st_size)
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
        isDirectory = status.st_mode & S_IFMT == S_IFDIR
    }

    private static func nanoseconds(_ time: timespec) -> UInt64 {
        UInt64(truncatingIfNeeded: time.tv_sec) &* 1_000_000_000 &+ UInt64(truncatingIfNeeded: time.tv_nsec)
    }
}
