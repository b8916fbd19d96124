import { describeTrackerConformance } from '../../../internal-contracts/tracker/conformance.js';
import { githubHarness } from './harness.js';

describeTrackerConformance('github (fake GitHub over HTTP)', githubHarness);
