import A11yFrontEnd
import NIOCore
import NIOPosix
import Testing

/// A connection's task runs on its channel's event loop (SocketFrontEnd), so these hold the
/// executor to that: every job of a task that prefers it, before and after it suspends, runs there.
@Suite struct EventLoopTaskExecutorTests {
    actor Counter {
        var value = 0
        func increment() -> Int {
            value += 1
            return value
        }
    }

    @Test func aTaskThatPrefersItRunsOnTheLoopAcrossSuspensions() async {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor(loop)
        let counter = Counter()
        let onTheLoop = await withTaskExecutorPreference(executor) {
            var seen: [Bool] = [loop.inEventLoop]
            await Task.yield()
            seen.append(loop.inEventLoop)
            _ = await counter.increment()   // a default actor, and back
            seen.append(loop.inEventLoop)
            try? await Task.sleep(for: .milliseconds(2))
            seen.append(loop.inEventLoop)
            return seen
        }
        #expect(onTheLoop == [true, true, true, true])
        #expect(!loop.inEventLoop)
    }

    @Test func aChildTaskAddedWithThePreferenceRunsOnTheLoop() async {
        let loops = MultiThreadedEventLoopGroup.singleton
        let first = loops.next()
        let second = loops.next()
        let results = await withDiscardingTaskGroup { group in
            let seen = SeenOnLoops()
            for loop in [first, second] {
                group.addTask(executorPreference: EventLoopTaskExecutor(loop)) {
                    await Task.yield()
                    await seen.record(loop.inEventLoop)
                }
            }
            return seen
        }
        #expect(await results.all == [true, true])
    }

    actor SeenOnLoops {
        var all: [Bool] = []
        func record(_ value: Bool) { all.append(value) }
    }
}
