// What every test of the target uses from TestSupport (`eventually`,
// `waitUntil`, `InspectorProcess`, `TmuxSession`, `ProgramRun`), visible in
// each file without an import of its own.
@_exported import TestSupport
