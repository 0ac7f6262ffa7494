/** Publishing alert notifications: the SNS adapter of the AlertPublisher port. */
export { SnsAlertPublisher } from './SnsAlertPublisher.js';
