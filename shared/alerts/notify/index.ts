/** Publishing alert notifications: the SNS adapter of the AlertPublisher port. */
export { SnsAlertPublisher, alertMessageAttributes, alertSubject } from './SnsAlertPublisher.js';
