import DiligenceCore
import Testing

/// "Did you mean": one function for commands, flags, task names and config keys.
@Suite struct SuggestionTests {
    @Test func editDistanceCountsASwapAsOneEdit() {
        #expect(Suggestion.editDistance("strat", "start") == 1)
        #expect(Suggestion.editDistance("day_start_at", "day_starts_at") == 1)
        #expect(Suggestion.editDistance("", "abc") == 3)
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.editDistance("same", "same") == 0)
    }

    @Test func closestWordsFirstAndOnlyCloseOnes() {
        let commands = ["start", "stop", "status", "stats", "skip", "pause", "resume"]
        #expect(Suggestion.closest(to: "strat", in: commands) == ["start"])
        #expect(Suggestion.closest(to: "stauts", in: commands) == ["status", "stats"])
        #expect(Suggestion.closest(to: "STOP", in: commands) == []) // the word itself is not a suggestion
        #expect(Suggestion.closest(to: "xylophone", in: commands) == [])
        #expect(Suggestion.closest(to: "", in: commands) == [])
        // Only the nearest; a beginning of a longer word counts when nothing is nearer.
        #expect(Suggestion.closest(to: "Stu", in: ["Study", "Work"]) == ["Study"])
        #expect(Suggestion.didYouMean("wrok", ["work", "goal"], quote: "\"") == " Did you mean \"work\"?")
        #expect(Suggestion.didYouMean("stat", ["start", "stats", "status"]) == " Did you mean start or stats?")
        #expect(Suggestion.didYouMean("zzz", ["start"]).isEmpty)
    }
}
