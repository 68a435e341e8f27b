// The filter language lives in its own module so the agent can match traffic
// rules with it; everything that sees the inspector's core sees it too.
@_exported import FlowFilter
