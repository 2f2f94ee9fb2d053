import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Reading an entry costs one read(2) plus one checksum pass over the payload, a noticeable share of the read
// when the file is in the page cache (BENCHMARKS.md, disk-cache rows). The checksum is there to catch damage: a file truncated or torn by a crash, or
// written over. Any change made through the file system changes the file's stamp (FileStamp: device, inode,
// size, nanosecond mtime and ctime; ctime cannot be set by any user call), and crash damage appears only across a
// restart of the machine. So a file version, once known good, stays good for the rest of the boot, and the
// checksum is skipped for it (unless `Configuration.verifiesEveryRead`):
// - within this cache: `verifiedFiles` remembers the stamps of versions read and verified, or written here (the
//   payload is the one checksummed for the header; the stamp is taken after the rename);
// - across processes and restarts of the process: the index records, per entry, a seal, the XXH64 of the boot's
//   identity (/proc/sys/kernel/random/boot_id) and the stamp of the version verified or written. A read whose
//   fstat gives the sealed stamp in the same boot skips the checksum. A read that computed it journals the seal.
// What this trusts: that within one boot, bytes do not change under an unchanged stamp. What breaks it: damage
// below the file system (bad media not reported as EIO, a write-back that failed after write(2) returned), or a
// write within the kernel's timestamp tick (a few ms) of the verified version's last change; the first two the
// checksum would catch on a read after the page was evicted. `verifiesEveryRead` is for those.

extension DiskCache {
    /// The most file versions remembered; past it the memo is emptied and starts over.
    static let maxVerifiedFiles = 4096

    /// The most bytes of a boot identity used in a seal (the kernel's is 36).
    static let maxBootIdentityLength = 64

    /// This boot of the machine: the bytes of `/proc/sys/kernel/random/boot_id` (a random UUID the kernel draws
    /// at boot), or `nil` where it cannot be read (then only the in-process memo is trusted).
    static let currentBootIdentity: [UInt8]? = {
        // Read, not sized by fstat: /proc files report a size of 0.
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { diskCacheClose(fd) }
        guard let bytes = DiskCacheDirectory.read(fd: fd, offset: 0, length: maxBootIdentityLength) else { return nil }
        return bootIdentity(Array(bytes.prefix { $0 != UInt8(ascii: "\n") }))
    }()

    /// `bytes` as a boot identity: at most ``maxBootIdentityLength`` bytes; `nil` when shorter than 16.
    static func bootIdentity(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.count >= 16 ? Array(bytes.prefix(maxBootIdentityLength)) : nil
    }

    /// The seal of file version `stamp` in this boot (never 0, which means "no seal"), or `nil` when the boot is
    /// unknown.
    func seal(of stamp: DiskCacheDirectory.FileStamp) -> UInt64? {
        guard let boot = bootIdentity else { return nil }
        // On the stack: this runs on every read.
        return withUnsafeTemporaryAllocation(byteCount: Self.maxBootIdentityLength + 40, alignment: 8) { buffer in
            buffer.copyBytes(from: boot)
            func put(_ field: UInt64, _ i: Int) {
                buffer.storeBytes(of: field.littleEndian, toByteOffset: boot.count + 8 * i, as: UInt64.self)
            }
            put(stamp.file.device, 0)
            put(stamp.file.inode, 1)
            put(UInt64(bitPattern: stamp.size), 2)
            put(UInt64(bitPattern: stamp.modified), 3)
            put(UInt64(bitPattern: stamp.changed), 4)
            let seal = XXH64.hash(UnsafeRawBufferPointer(rebasing: buffer[..<(boot.count + 40)]))
            return seal == 0 ? 1 : seal
        }
    }

    /// Whether this version of `digest`'s file is known good: verified or written by this cache, or `sealed` (the
    /// index holds this version's seal: a process verified or wrote it in this boot).
    func isVerified(_ digest: SHA256Digest, _ stamp: DiskCacheDirectory.FileStamp, sealed: Bool = false) -> Bool {
        guard !configuration.verifiesEveryRead else { return false }
        return sealed || verifiedFiles.withLock { $0[digest] == stamp }
    }

    /// How many reads of this cache computed the payload checksum.
    package var payloadChecks: Int { state.withLock { $0.payloadChecks } }

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
    /// as for a file read and verified before. Forgets `digest`'s file otherwise. Returns the seal of the file
    /// written (0 when it was replaced already, or the boot is unknown), for its index record.
    func rememberOwnWrite(_ digest: SHA256Digest, path: String, file: DiskCacheDirectory.FileID?) -> UInt64 {
        // Stamped after the rename, which changes the file's ctime.
        guard let file, let stamp = DiskCacheDirectory.stamp(path: path), stamp.file == file else {
            forgetVerified(digest)
            return 0
        }
        rememberVerified(digest, stamp)
        return seal(of: stamp) ?? 0
    }

    /// Forgets `digest`'s file (replaced by this process, or found damaged).
    func forgetVerified(_ digest: SHA256Digest) {
        _ = verifiedFiles.withLock { $0.removeValue(forKey: digest) }
    }
}
