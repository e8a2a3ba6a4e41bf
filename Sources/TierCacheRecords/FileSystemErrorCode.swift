import TierCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TierCacheError.Code {
    /// The code of a file-system call that failed with `errno`: a full disk or quota is
    /// `diskFull`, a path through a file `notADirectory`, no permission (or a read-only file
    /// system) `permissionDenied`, anything else (no descriptors left, an I/O error)
    /// `storageFailure`. Every failure was `permissionDenied`, which sent users to fix permissions
    /// on a full disk.
    package init(fileSystemErrno errno: Int32) {
        switch errno {
        case ENOSPC, EDQUOT: self = .diskFull
        case ENOTDIR, EEXIST: self = .notADirectory
        case EACCES, EPERM, EROFS: self = .permissionDenied
        default: self = .storageFailure
        }
    }
}
