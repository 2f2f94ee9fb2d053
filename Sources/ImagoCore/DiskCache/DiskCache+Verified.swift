// Reading a 200 KB entry costs one read(2) plus one checksum pass over the payload, ~15-20 % of the read. A
// process often reads the same entries again (a decode per request for the same image, several processed
// variants of one download), and an entry file is never rewritten in place: a store writes a new file and
// renames it over the old one. So each DiskCache remembers which file versions (FileStamp: inode, size, mtime,
// ctime) passed the checksum, and skips it for them (unless `Configuration.verifiesEveryRead`). A file this
// process wrote counts as verified too: its payload is the one checksummed when its header was made, and the
// stamp is taken from the file after the rename. The trust is the same in both cases: a version, once known
// good, stays good until its stamp changes, as a replacement, truncation or write(2) changes it (a write
// within the kernel's timestamp tick of the last change, a few ms, can go unseen).

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

    /// Records the file just renamed to `path` as verified when it is still the one this process wrote
    /// (`file`): its bytes are the ones checksummed for its header, so the first read needs no checksum pass,
    /// as for a file read and verified before. Forgets `digest`'s file otherwise.
    func rememberOwnWrite(_ digest: SHA256Digest, path: String, file: DiskCacheDirectory.FileID?) {
        // Stamped after the rename, which changes the file's ctime.
        guard let file, let stamp = DiskCacheDirectory.stamp(path: path), stamp.file == file else {
            forgetVerified(digest)
            return
        }
        rememberVerified(digest, stamp)
    }

    /// Forgets `digest`'s file (replaced by this process, or found damaged).
    func forgetVerified(_ digest: SHA256Digest) {
        _ = verifiedFiles.withLock { $0.removeValue(forKey: digest) }
    }
}
