import { describeTrackerConformance } from '../../../internal-contracts/tracker/conformance.js';
import { gitlabHarness } from './harness.js';

describeTrackerConformance('gitlab (fake GitLab over HTTP)', gitlabHarness);
