import Testing

@testable import DiligenceDaemon

/// The control server's parts that are plain values: the line framer, the output buffer and its
/// back-pressure rule, the crowding episode and the accept back-off.
@Suite struct LineFramerTests {
    func lines(_ framer: inout LineFramer) -> [String] {
        var out: [String] = []
        while case .line(let line) = framer.next() { out.append(String(decoding: line, as: UTF8.self)) }
        return out
    }

    @Test func linesEndAtNewlinesWithoutTheirCarriageReturnAndBlankOnesAreSkipped() {
        var framer = LineFramer(maxLineBytes: 100)
        framer.append(Array("one\r\n\n\r\ntwo\nthr".utf8))
        #expect(lines(&framer) == ["one", "two"])
        #expect(framer.next() == .needMore)
        #expect(framer.hasPartialLine && framer.pendingBytes == 3)
        framer.append(Array("ee\n".utf8))
        #expect(lines(&framer) == ["three"])
        #expect(!framer.hasPartialLine && framer.pendingBytes == 0)
    }

    /// docs/protocol.md: blank lines are ignored — a line of only JSON whitespace is blank too
    /// (issue 26: it got `invalid_json`).
    @Test func whitespaceOnlyLinesAreBlank() {
        var framer = LineFramer(maxLineBytes: 100)
        framer.append(Array("  \n\t \r\n \t\t\none\n \r \n".utf8))
        #expect(lines(&framer) == ["one"])
        #expect(framer.next() == .needMore && framer.pendingBytes == 0)
    }

    @Test func aLineSplitAcrossManyReadsComesOutWhole() {
        var framer = LineFramer(maxLineBytes: 1000)
        let text = String(repeating: "x", count: 500)
        for byte in Array(text.utf8) {
            framer.append([byte])
            #expect(framer.next() == .needMore)
        }
        framer.append([0x0A])
        #expect(lines(&framer) == [text])
    }

    @Test func aTooLongLineIsRefusedCompleteOrNot() {
        var complete = LineFramer(maxLineBytes: 4)
        complete.append(Array("12345\nok\n".utf8))
        #expect(complete.next() == .tooLong)
        // Exactly the limit is fine; "\r" counts (it is part of what was sent).
        var exact = LineFramer(maxLineBytes: 4)
        exact.append(Array("1234\n123\r\n".utf8))
        #expect(lines(&exact) == ["1234", "123"])
        var partial = LineFramer(maxLineBytes: 4)
        partial.append(Array("1234".utf8))
        #expect(partial.next() == .needMore)
        partial.append(Array("5".utf8))
        #expect(partial.next() == .tooLong)
    }

    @Test func resetForgetsEverything() {
        var framer = LineFramer(maxLineBytes: 100)
        framer.append(Array("a\nb".utf8))
        framer.reset()
        #expect(framer.next() == .needMore && framer.pendingBytes == 0 && !framer.hasPartialLine)
    }
}

@Suite struct OutputBufferTests {
    @Test func sentBytesAdvanceAndAnEmptiedBufferStartsOver() {
        var output = OutputBuffer()
        output.append("hello\n")
        #expect(output.pending == 6)
        output.sent(2)
        #expect(output.pending == 4 && output.start == 2)
        #expect(Array(output.bytes[output.start...]) == Array("llo\n".utf8))
        output.sent(4)
        #expect(output.isEmpty && output.start == 0 && output.bytes.isEmpty)
    }

    @Test func aLargeAnswerSentInPiecesIsCompactedOnceMostOfItIsSent() {
        var output = OutputBuffer()
        output.append(String(repeating: "x", count: 200_000))
        output.sent(OutputBuffer.keptCapacity)
        // Sent bytes are not the larger part yet: kept, only the index moved.
        #expect(output.start == OutputBuffer.keptCapacity && output.pending == 200_000 - OutputBuffer.keptCapacity)
        output.sent(50_000)
        #expect(output.start == 0 && output.bytes.count == output.pending)
        #expect(output.pending == 200_000 - OutputBuffer.keptCapacity - 50_000)
    }

    @Test func backPressureStopsReadingPastTheBacklogAndResumesAtHalf() {
        var output = OutputBuffer()
        output.append(String(repeating: "x", count: OutputBuffer.maxBacklog))
        #expect(output.takesRequests)
        output.append("y")
        #expect(!output.takesRequests)
        #expect(output.overflows(watcher: true) && !output.overflows(watcher: false))
        // Back under the backlog is not enough: requests wait until half of it is taken.
        output.sent(OutputBuffer.maxBacklog / 2)
        #expect(!output.takesRequests)
        output.sent(1)
        #expect(output.takesRequests)
        output.append(String(repeating: "z", count: OutputBuffer.maxBacklog / 2))
        #expect(output.takesRequests)
    }
}

@Suite struct CrowdingTests {
    let second: UInt64 = 1_000_000_000

    @Test func anEpisodeCountsItsEventsAndEndsAfterAQuietPeriod() {
        var episode = Crowding(since: 10 * second)
        episode.record(.evicted, at: 10 * second)
        episode.record(.evicted, at: 11 * second)
        episode.record(.refused, at: 12 * second)
        episode.record(.acceptFailed, at: 12 * second)
        #expect(episode.counts == [.evicted: 2, .refused: 1, .acceptFailed: 1])
        #expect(!episode.isOver(at: 12 * second + UInt64(Crowding.quietSeconds * 1e9) - 1))
        #expect(episode.isOver(at: 12 * second + UInt64(Crowding.quietSeconds * 1e9)))
        #expect(
            episode.summary(connected: 3)
                == "Clients are admitted normally again (3 connected); over 2 s, 2 idle client(s) were closed to make room, 1 refused, 1 accept attempt(s) failed."
        )
    }

    @Test func theBackOffDoublesUpToItsLongestPauseAndStartsOverAfterASuccess() {
        var backoff = AcceptBackoff()
        let delays = (0..<8).map { _ in backoff.failed() }
        #expect(delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
        #expect(backoff.paused)
        backoff.succeeded()
        #expect(backoff.failed() == AcceptBackoff.firstDelay)
    }
}
