// Reading a 200 KB entry costs one read(2) plus one checksum pass over the payload, ~15-20 % of the read. A
// process often reads the same entries again (a decode per request for the same image, several processed
// variants of one download), and an entry file is never rewritten in place: a store writes a new file and
// renames it over the old one. So each DiskCache remembers which file versions (FileStamp: inode, size, mtime,
// ctime) passed the checksum, and skips it for them (unless `Configuration.verifiesEveryRead`).

extension DiskCache {
    /// The most file versions remembered; past it the memo is emptied and starts over.
    static let maxVerifiedFiles = 4096

    /// Whether this version of `digest`'s file passed the payload checksum in this process.
    func isVerified(_ digest: SHA256Digest, _ stamp: DiskCacheDirectory.FileStamp) -> Bool {
        guard !configuration.verifiesEveryRead else { return false }
        return verifiedFiles.withLock { $0[digest] == stamp }
    }

    /// Records that this version of `digest`'s file was read whole and verified.
    func rememberVerified(_ digest: SHA256Digest, _ stamp: DiskCacheDirectory.FileStamp) {
        guard !configuration.verifiesEveryRead else { return }
        verifiedFiles.withLock { memo in
            if memo[digest] == stamp { return }
            if memo.count >= Self.maxVerifiedFiles { memo.removeAll(keepingCapacity: true) }
            memo[digest] = stamp
        }
    }

    /// Forgets `digest`'s file (replaced by this process, or found damaged).
    func forgetVerified(_ digest: SHA256Digest) {
        _ = verifiedFiles.withLock { $0.removeValue(forKey: digest) }
    }
}
