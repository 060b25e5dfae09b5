import Dispatch
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The control server's read loop: handlers run on the daemon's queue, and a descriptor taken
/// out of the loop (back-pressure, close) gets no more calls.
@Suite struct ReadLoopTests {
    /// Handler calls, kept on the queue.
    final class Calls: @unchecked Sendable {
        var tokens: [Int] = []
        let arrived = DispatchSemaphore(value: 0)
    }

    @Test func handlersRunOnTheQueueAndAnUnwatchedDescriptorIsLeftAlone() throws {
        let queue = DispatchQueue(label: "read-loop-test")
        let loop = try ReadLoop(queue: queue)
        loop.start()
        defer { queue.sync { loop.stop() } }
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let calls = Calls()
        func handler(_ token: Int) -> () -> Void {
            {
                dispatchPrecondition(condition: .onQueue(queue))
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = read(fds[0], &buffer, buffer.count) // level-triggered: take what is there
                calls.tokens.append(token)
                calls.arrived.signal()
            }
        }
        func send() {
            var byte: UInt8 = 1
            #expect(write(fds[1], &byte, 1) == 1)
        }

        queue.sync { loop.watch(fds[0], token: 7, handler: handler(7)) }
        send()
        #expect(calls.arrived.wait(timeout: .now() + 5) == .success)

        queue.sync { loop.unwatch(fds[0], token: 7) }
        send()
        #expect(calls.arrived.wait(timeout: .now() + 0.3) == .timedOut)

        // Watched again under a new token (as a new connection reusing the number would be).
        queue.sync { loop.watch(fds[0], token: 8, handler: handler(8)) }
        #expect(calls.arrived.wait(timeout: .now() + 5) == .success)
        #expect(queue.sync { calls.tokens } == [7, 8])
    }
}
