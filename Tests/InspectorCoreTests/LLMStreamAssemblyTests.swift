import Foundation
@testable import InspectorCore
import WireProtocol
import XCTest

/// A streamed completion's text is joined from its deltas, for each of the
/// common shapes, with its pace.
final class LLMStreamAssemblyTests: XCTestCase {
    private func events(_ text: String, times: [Double]? = nil) -> [ServerSentEvent] {
        var decoder = ServerSentEventDecoder()
        var events = decoder.feed(Array(text.utf8), at: nil)
        if let times { for index in events.indices { events[index].at = times[index] } }
        return events
    }

    func testOpenAIChatCompletions() throws {
        let stream = events("""
        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}

        data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo"}}]}

        data: [DONE]


        """, times: [0.5, 1.0, 1.5, 2.5])
        let llm = try XCTUnwrap(LLMStream(events: stream))
        XCTAssertEqual(llm.provider, .openAIChat)
        XCTAssertEqual(llm.text, "Hello")
        XCTAssertEqual(llm.firstEventAt, 0.5)
        XCTAssertEqual(llm.eventsPerSecond, 1.5, "three gaps in two seconds")
    }

    func testOpenAIResponses() throws {
        let stream = events("""
        event: response.created
        data: {"type":"response.created","response":{}}

        event: response.output_text.delta
        data: {"type":"response.output_text.delta","delta":"Hi "}

        event: response.output_text.delta
        data: {"type":"response.output_text.delta","delta":"there"}


        """)
        let llm = try XCTUnwrap(LLMStream(events: stream))
        XCTAssertEqual(llm.provider, .openAIResponses)
        XCTAssertEqual(llm.text, "Hi there")
        XCTAssertNil(llm.eventsPerSecond, "no times, no pace")
    }

    func testAnthropicMessages() throws {
        let stream = events("""
        event: message_start
        data: {"type":"message_start","message":{}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour"}}

        event: ping
        data: {"type": "ping"}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" ✓"}}


        """)
        let llm = try XCTUnwrap(LLMStream(events: stream))
        XCTAssertEqual(llm.provider, .anthropic)
        XCTAssertEqual(llm.text, "Bonjour ✓")
    }

    func testOtherEventsAreNotAnLLMStream() {
        XCTAssertNil(LLMStream(events: events("data: {\"tick\":1}\n\ndata: plain text\n\n")))
    }
}
