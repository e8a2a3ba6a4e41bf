import CLMDB
import Foundation
import Testing
import TierCache

@testable import TierCacheLMDB

/// How LMDB's return codes reach callers: each as a typed error that says what to do.
@Suite("LMDB return codes as TierCacheErrors")
struct LMDBStatusTests {
    @Test("A poisoned environment (MDB_PANIC) says the store must be opened again; a full disk is diskFull")
    func codes() {
        let panic = LMDBStatus.error(MDB_PANIC, "beginning a write", path: "/tmp/nowhere")
        #expect(panic.code == .storageFailure && panic.message.contains("opened again"), "\(panic)")
        #expect(LMDBStatus.error(ENOSPC, "committing", path: "/tmp/nowhere").code == .diskFull)
        #expect(LMDBStatus.error(MDB_CORRUPTED, "reading", path: "/tmp/nowhere").code == .damagedStore)
    }
}
