import Foundation
import Testing

@testable import ImagoCore

/// The URLSession transport's handles: one made and released without `start()` (the coordinator's race with a
/// cancellation, found by `imago-bench soak` with the URLSession loader) must not trap.
@Suite struct URLSessionTransportHandleTests {
    @Test func aHandleReleasedWithoutStartingIsReleasedCleanly() throws {
        let loader = HTTPDataLoader()
        let transport = try #require(loader.coordinator.transport as? URLSessionTransport)
        for number in 1...3 {
            let attempt = LoadAttempt(
                request: DataRequest(url: URL(string: "http://127.0.0.1:9/never")!), transferID: UInt64(number),
                number: 1, coordinator: loader.coordinator)
            var handle = transport.makeHandle(for: attempt)
            #expect(handle != nil)
            // Not registered yet: cancel ends nothing, as in `LoadCoordinator.begin` when the transfer is gone.
            handle?.cancel()
            handle = nil  // released here; before the fix libdispatch trapped ("release of a suspended object")
        }
    }
}
