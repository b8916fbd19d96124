import { describeTrackerConformance } from '../../../internal-contracts/tracker/conformance.js';
import { linearHarness } from './harness.js';

describeTrackerConformance('linear (fake Linear GraphQL over HTTP)', linearHarness);
