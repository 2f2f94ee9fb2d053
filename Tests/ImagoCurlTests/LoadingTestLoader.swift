import ImagoCore
import ImagoCurl

// The shared network scenarios (the symbolic links to ImagoCoreTests' Loading*Tests.swift) run here against
// CurlDataLoader, configured with the same HTTPDataLoader.Configuration as in ImagoCoreTests.

/// The loader under test here: libcurl's.
typealias TestLoader = CurlDataLoader

/// A loader under test with `configuration`.
func makeTestLoader(_ configuration: HTTPDataLoader.Configuration) -> TestLoader {
    CurlDataLoader(configuration: CurlDataLoader.Configuration(loading: configuration))
}
