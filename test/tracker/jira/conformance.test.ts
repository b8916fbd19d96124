import { describeTrackerConformance } from '../../../internal-contracts/tracker/conformance.js';
import { jiraHarness } from './harness.js';

describeTrackerConformance('jira (fake Jira over HTTP)', jiraHarness);
