// swift-tools-version:6.0
import PackageDescription

// Dependency rule: ImagoCore depends on nothing; everything points inward (see the Architecture article in Sources/ImagoCore/ImagoCore.docc).
// Platforms: Linux only (Debian's -dev packages, glibc). No Apple platform is declared because none is built or
// tested: the loaders, the memory-pressure source, the disk cache and the server use Linux interfaces.
let package = Package(
    name: "Imago",
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        .library(name: "ImagoCore", targets: ["ImagoCore"]),
        .library(name: "ImagoCodecs", targets: ["ImagoCodecs"]),
        .library(name: "ImagoTesting", targets: ["ImagoTesting"]),
        .library(name: "ImagoCurl", targets: ["ImagoCurl"]),
        .library(name: "ImagoServer", targets: ["ImagoServer"]),
        .library(name: "ImagoRedis", targets: ["ImagoRedis"]),
        .executable(name: "imago", targets: ["imago"]),
        .executable(name: "imago-bench", targets: ["imago-bench"]),
    ],
    targets: [
        // The engine: Foundation (+ FoundationNetworking on Linux) only.
        .target(name: "ImagoCore"),

        // C libraries from Debian's -dev packages, wrapped once in ImagoCodecs.
        .systemLibrary(
            name: "CJPEGTurbo", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng16",
            providers: [.apt(["libpng-dev"])]),
        .systemLibrary(
            name: "CWebP", pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"])]),
        .target(name: "CImagoShims"),
        // dav1d's default settings with its stderr logger off, for libavif's and libheif's decoders (which give no
        // way to set it): dav1d_default_settings defined here, which the dynamic linker binds their calls to.
        .target(name: "CDav1dQuiet"),
        // The AVX-512 (VBMI + FP16) colour conversion kernel of ImagoCodecs' Color/ folder, chosen at run time per
        // function (target attributes), so the package still builds for baseline x86-64 and aarch64.
        .target(name: "CColorKernel"),
        // libjpeg's scanline API (libjpeg-turbo's libjpeg.so) for the JPEG decode fused with that kernel: C because
        // libjpeg reports errors by longjmp.
        .target(name: "CJPEGStrips", dependencies: ["CColorKernel"], linkerSettings: [.linkedLibrary("jpeg")]),
        // The AVX-512 and AVX2 kernels of the opaque RGBA resample (ImagoCodecs' `resampledWithVectorKernel`: the
        // decoders' step to their fitted size), chosen at run time like CColorKernel's; ImagoCore keeps the Swift
        // loops.
        .target(name: "CResampleKernel"),
        // The colour quantizer's nearest-colour search (GIF and palette PNG output), AVX2 or SSE2 chosen at run
        // time, plain C elsewhere.
        .target(name: "CPaletteKernel"),
        // libpng's full write API for interlaced PNG output (the simplified API cannot interlace): C because libpng
        // reports errors by longjmp.
        .target(name: "CPNGFull", linkerSettings: [.linkedLibrary("png16")]),
        // imago-bench's own C (glibc's malloc statistics), linked by nothing that ships.
        .target(name: "CBenchShims"),
        // libcurl, wrapped once in ImagoCurl (the network layer: HTTP/2, address policy, TLS and proxy control).
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "ImagoCurl", dependencies: ["ImagoCore", "CCurl", "CCrypto", "ImagoZlib"]),
        // zlib, wrapped once: PNG's compressed chunks (ImagoCodecs) and OTLP's gzip exports (ImagoCurl).
        .target(name: "ImagoZlib", dependencies: ["CZlib"]),
        // RS256 signatures for Google service accounts (OpenSSL's libcrypto, which libcurl already loads).
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CAVIF", pkgConfig: "libavif",
            providers: [.apt(["libavif-dev"])]),
        .systemLibrary(
            name: "CHEIF", pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]),
        // FFmpeg's libavcodec headers (libavcodec-dev, 5.1): its HEVC decoder, used only by CHEIFPlugin, which
        // loads the library on first use (dlopen): linked, its ~70 dependencies cost every process 12 MB of RSS.
        .systemLibrary(
            name: "CAVCodec",
            providers: [.apt(["libavcodec-dev"])]),
        // Imago's libheif decoder plugin over libavcodec: HEVC on the calling thread, YCbCr → RGB in C.
        .target(
            name: "CHEIFPlugin", dependencies: ["CHEIF", "CAVCodec"],
            linkerSettings: [.linkedLibrary("heif")]),
        // Imago's SVG rasteriser: librsvg 2 and cairo loaded with dlopen on first use (linked, their ~50
        // dependencies cost every process 9 MB of RSS); their types are declared in it, so no -dev package.
        .target(name: "CSVGPlugin"),
        .systemLibrary(
            name: "CTIFF", pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(
            name: "CJXL", pkgConfig: "libjxl",
            providers: [.apt(["libjxl-dev"])]),
        // `imago serve`'s HTTP/1.1 transport (internal epoll thread, suspended connections).
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        // Colour management (ICC profiles), used by ImagoCodecs' Color/ folder, and zlib (ImagoZlib).
        .systemLibrary(
            name: "CLCMS2", pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // SVG sanitizing for imago serve's SVG pass-through (the same libxml2 librsvg parses with).
        .systemLibrary(
            name: "CXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        // hiredis, wrapped once in ImagoRedis (the shared cache tier of a fleet).
        .systemLibrary(
            name: "CHiredis", pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]),
        .target(name: "ImagoRedis", dependencies: ["ImagoCore", "CHiredis"]),

        .target(
            name: "ImagoCodecs",
            dependencies: [
                "ImagoCore", "CJPEGTurbo", "CPNG", "CWebP", "CGIF", "CImagoShims",
                "CAVIF", "CHEIF", "CHEIFPlugin", "CTIFF", "CJXL", "CLCMS2", "ImagoZlib", "CColorKernel", "CJPEGStrips",
                "CResampleKernel", "CPaletteKernel", "CPNGFull", "CSVGPlugin", "CXML2", "CDav1dQuiet",
            ]),
        .target(name: "Imago", dependencies: ["ImagoCore", "ImagoCodecs", "ImagoCurl", "CImagoShims"]),
        .target(name: "ImagoTesting", dependencies: ["ImagoCore"]),
        // The image proxy (imgproxy URLs → pipeline → encoded output) and its libmicrohttpd server.
        .target(name: "ImagoServer", dependencies: ["Imago", "ImagoCurl", "CMicroHTTPD"]),
        // The origin `imago demo` serves its gallery from (on ImagoServer's HTTP server; not a test double).
        .target(name: "ImagoDemoServer", dependencies: ["ImagoServer"]),
        // No shipped binary links ImagoTesting (the test doubles): the CLI's demo uses ImagoDemoServer.
        .target(name: "ImagoCLI", dependencies: ["Imago", "ImagoServer", "ImagoDemoServer", "ImagoRedis"]),
        .executableTarget(name: "imago", dependencies: ["ImagoCLI"]),
        .executableTarget(
            name: "imago-fuzz",
            dependencies: [
                "Imago", "ImagoCLI", "ImagoCodecs", "ImagoCurl", "ImagoServer", "ImagoTesting", "ImagoZlib",
            ]),
        // Child process for the disk cache's crash and multi-process tests (fill, share); not a product.
        .executableTarget(name: "imago-cache-stress", dependencies: ["ImagoCore", "ImagoTesting"]),
        // The shared Redis tier's benchmark rows (make bench-redis); not a product.
        .executableTarget(name: "imago-redis-bench", dependencies: ["Imago", "ImagoRedis", "ImagoTesting"]),
        .executableTarget(
            name: "imago-bench",
            dependencies: [
                "Imago", "ImagoCodecs", "ImagoTesting", "CJPEGTurbo", "CWebP", "CGIF", "CPNG", "CImagoShims",
                "CBenchShims",
            ]),

        .testTarget(name: "ImagoCoreTests", dependencies: ["ImagoCore", "ImagoTesting"]),
        // CPNG: the GIF/WebP conformance tests decode their PNG references with libpng directly. CJPEGTurbo: the
        // progressive DC reader is compared with libjpeg's own 1/8-scale decode, and its test files are encoded
        // with TurboJPEG. CWebP: the huge-image tests encode a 12000×12000 WebP from YUV planes. CHEIF: the
        // embedded-thumbnail tests write HEICs whose thumbnail differs from the primary image.
        .testTarget(
            name: "ImagoCodecsTests",
            dependencies: [
                "ImagoCodecs", "Imago", "CPNG", "CJPEGTurbo", "ImagoTesting",
                "CTIFF", "CWebP", "CAVIF", "CJXL", "CLCMS2", "CHEIF", "CPaletteKernel", "ImagoZlib", "CDav1dQuiet",
            ]),
        .testTarget(name: "ImagoTestingTests", dependencies: ["ImagoTesting", "ImagoCore"]),
        .testTarget(name: "ImagoCLITests", dependencies: ["ImagoCLI", "ImagoTesting"]),
        // The loader scenarios of ImagoCoreTests (linked in) against CurlDataLoader, plus its own tests.
        .testTarget(name: "ImagoCurlTests", dependencies: ["ImagoCurl", "ImagoCore", "ImagoTesting"]),
        .testTarget(name: "ImagoServerTests", dependencies: ["ImagoServer", "ImagoCLI", "ImagoTesting"]),
        // Real redis-server processes (unix sockets and loopback ports) started by the fixtures.
        .testTarget(name: "ImagoRedisTests", dependencies: ["ImagoRedis", "ImagoCore", "ImagoTesting", "ImagoCLI"]),
    ]
)
