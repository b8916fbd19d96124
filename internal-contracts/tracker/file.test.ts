import { describeTrackerConformance } from './conformance.js';
import { fileTrackerHarness } from './file-harness.js';

describeTrackerConformance('file (JSON list)', fileTrackerHarness('json'));
describeTrackerConformance('file (YAML with an issues key)', fileTrackerHarness('yaml'));
