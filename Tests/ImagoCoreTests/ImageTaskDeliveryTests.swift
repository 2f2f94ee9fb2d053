import Foundation
import Testing

@testable import ImagoCore

@Suite struct ImageTaskDeliveryTests {
    /// Progress yielded to a stream while the consuming Swift task is being cancelled, whose cancellation handler
    /// calls `cancel()`: with the yield made under the task's lock, the yield waits for the consumer's status
    /// lock (held by the canceller) while the canceller waits for the task's lock, and both hang.
    @Test func cancellingAConsumerWhileProgressFlowsNeverDeadlocks() async throws {
        let rounds = 300
        let done = DispatchSemaphore(value: 0)
        Thread {
            let group = DispatchGroup()
            for round in 0..<rounds {
                let task = ImageTask(
                    id: round, request: ImageRequest(url: URL(string: "http://127.0.0.1/\(round).jpg")!),
                    handlers: .init())
                let consumer = Task {
                    await withTaskCancellationHandler {
                        var events = 0
                        for await _ in task.events { events += 1 }
                        return events
                    } onCancel: {
                        task.cancel()
                    }
                }
                DispatchQueue.global().async(group: group) {
                    for step in 0..<200 { task.deliverProgress(.init(completed: Int64(step), total: 200)) }
                }
                usleep(UInt32(round % 7) * 20)
                consumer.cancel()
            }
            group.wait()
            done.signal()
        }.start()
        // Then every round ends: no thread is left waiting on the other's lock
        #expect(done.wait(timeout: .now() + 60) == .success)
    }
}
